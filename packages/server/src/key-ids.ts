import type { ResponseEvent } from "@petstore/core";

/**
 * Remembers which key each request authenticated with, as core reports it through
 * `onResponse`, so the access log can name the key (its id, never key material).
 */
export function keyIds(): { onResponse: (event: ResponseEvent) => void; keyIdOf: (request: Request) => string | undefined } {
  const byRequest = new WeakMap<Request, string>();
  return {
    onResponse: ({ request, keyId }) => {
      if (keyId !== undefined) byRequest.set(request, keyId);
    },
    keyIdOf: (request) => byRequest.get(request),
  };
}
