/**
 * The headers every answer carries, whatever its status: no caching, no content sniffing,
 * and the request's id. A new object per request: the pipeline adds the rate-limit headers
 * to it.
 * @example new Response(body, { headers: { ...standardHeaders(requestIdOf(request)), "Content-Type": "application/json" } })
 */
export function standardHeaders(requestId: string): Record<string, string> {
  return { "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "X-Request-Id": requestId };
}
