/** An incoming `X-Request-Id` worth echoing: 1 to 128 visible ASCII characters. */
const ECHOED = /^[\x21-\x7e]{1,128}$/;

/**
 * The request's id: the incoming `X-Request-Id` when it is 1 to 128 visible ASCII characters,
 * else a new UUID. Every answer carries it, and `onError` logs it.
 * @example const requestId = requestIdOf(request);
 */
export function requestIdOf(request: Request): string {
  const incoming = request.headers.get("x-request-id");
  return incoming !== null && ECHOED.test(incoming) ? incoming : crypto.randomUUID();
}
