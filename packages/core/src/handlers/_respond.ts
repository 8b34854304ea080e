import type { Context } from "../context.js";
import { responseWith } from "../http/answer-headers.js";

/**
 * A JSON response with the headers every answer carries (`ctx.headers`, `Content-Type`
 * among them) and its own; every body of the service goes through here.
 */
export function json(ctx: Context, body: unknown, status = 200, headers?: Record<string, string>): Response {
  return serialized(ctx, JSON.stringify(body), status, headers);
}

/** `json` for a body already serialised. */
export function serialized(ctx: Context, text: string, status = 200, headers?: Record<string, string>): Response {
  return responseWith(text, status, ctx.headers, headers);
}
