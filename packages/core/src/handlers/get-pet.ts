import * as v from "valibot";
import type { Context, Handler } from "../context.js";
import { ApiError } from "../errors.js";
import { IdSchema } from "../schemas.js";
import { json } from "./_respond.js";

function deprecationHeaders(ctx: Context): Record<string, string> {
  return {
    // RFC 9745: the instant the route was deprecated, as a structured-field date.
    Deprecation: `@${Math.floor(ctx.deprecation.deprecatedAt / 1000)}`,
    // RFC 8594: when it stops answering.
    Sunset: new Date(ctx.deprecation.sunsetAt).toUTCString(),
    Link: `<${ctx.basePath}/pets>; rel="successor-version"`,
  };
}

async function findPet(ctx: Context, headers: Record<string, string>): Promise<Response> {
  if (ctx.now >= ctx.deprecation.sunsetAt) {
    throw new ApiError("gone", "getPet was removed on its sunset date; use GET /pets with the status filter");
  }
  const raw = ctx.params.petId ?? "";
  const id = /^[0-9]{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!v.is(IdSchema, id)) {
    const message = "must be an integer from 1 to 9007199254740991";
    throw new ApiError("invalid_parameter", `Path parameter 'petId' ${message} (got '${raw}')`, [
      { path: "petId", message },
    ]);
  }
  const pet = await ctx.store.getPet(id);
  if (!pet) throw new ApiError("not_found", `Pet ${id} was not found`);
  return json(ctx, pet, 200, headers);
}

/**
 * `GET /pets/{petId}` (getPet, deprecated): one pet until the sunset instant, `410 gone`
 * from then on. Its answers (errors too) carry the deprecation headers.
 */
export const getPet: Handler = async (_request, ctx) => {
  const headers = deprecationHeaders(ctx);
  try {
    return await findPet(ctx, headers);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    throw new ApiError(error.code, error.message, error.details, { ...error.headers, ...headers });
  }
};
