import type { Handler } from "../context.js";
import { openApiDocument } from "../openapi.js";
import { serialized } from "./_respond.js";

/** The document's JSON for the base path last asked for: made when first asked (about 2 ms), not by every start. */
let made: { basePath: string; json: string } | undefined;

/** `GET /openapi.json`: the OpenAPI document of the API under its base path. */
export const getOpenApi: Handler = async (_request, ctx) => {
  if (made?.basePath !== ctx.basePath)
    made = { basePath: ctx.basePath, json: JSON.stringify(openApiDocument({ basePath: ctx.basePath })) };
  return serialized(ctx, made.json);
};
