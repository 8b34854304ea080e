import type { Middleware } from "openapi-fetch";

/**
 * openapi-fetch middleware that gives every POST an Idempotency-Key unless it has one: a 503
 * to a create may come after the pet was stored (the database answered too late), and a retry
 * with the same key then gets its 201 back instead of a second pet. Retry a failed create with
 * the same key (pass it in `headers`), as payment SDKs do.
 */
export const idempotentCreates: Middleware = {
  onRequest: ({ request }) => {
    if (request.method === "POST" && !request.headers.has("Idempotency-Key"))
      request.headers.set("Idempotency-Key", crypto.randomUUID());
    return request;
  },
};
