import type { Handler } from "../context.js";
import { PetStatusSchema } from "../schemas.js";
import { readPageQuery, respondWithPage } from "./_paging.js";

/** `GET /pets` (listPets): a page of pets ordered by id, optionally of one status. */
export const listPets: Handler = async (request, ctx) => {
  const query = readPageQuery(request.url, PetStatusSchema);
  return respondWithPage(ctx, "/pets", query, (q) => ctx.petPages.list(q));
};
