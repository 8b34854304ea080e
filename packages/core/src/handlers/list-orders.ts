import type { Handler } from "../context.js";
import { OrderStatusSchema } from "../schemas.js";
import { readPageQuery, respondWithPage } from "./_paging.js";

/** `GET /store/orders` (listOrders): a page of orders ordered by id, optionally of one status. */
export const listOrders: Handler = async (request, ctx) => {
  const query = readPageQuery(request.url, OrderStatusSchema);
  return respondWithPage(ctx, "/store/orders", query, async (q) => ({
    rows: await ctx.store.listOrders(q),
    kept: false,
  }));
};
