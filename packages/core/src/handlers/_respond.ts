import type { Context } from "../context.js";

/**
 * A JSON response with the headers every answer carries (`ctx.headers`, `Content-Type`
 * among them) and its own; every body of the service goes through here. Building the headers
 * once, at construction, is measurably cheaper than setting them one by one afterwards.
 */
export function json(ctx: Context, body: unknown, status = 200, headers?: Record<string, string>): Response {
  return serialized(ctx, JSON.stringify(body), status, headers);
}

/** `json` for a body already serialised. */
export function serialized(ctx: Context, text: string, status = 200, headers?: Record<string, string>): Response {
  // The context's own object when nothing is added: it is made for this answer alone.
  return new Response(text, { status, headers: headers ? { ...ctx.headers, ...headers } : ctx.headers });
}
