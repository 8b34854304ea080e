import { RequestAbortedError, toApiError, toErrorResponse } from "../errors.js";
import type { Settings } from "../options.js";
import type { Exchange } from "./exchange.js";
import { addUndecidedRateLimitHeaders } from "./rate-limit.js";

/**
 * The catch stage: anything a stage or a handler threw becomes the Error answer, with the
 * headers gathered so far. Unexpected errors go to `onError` with the request id (the client
 * sees `internal_error` only). When storage failed before the limiter decided (the key lookup
 * or the limiter itself), the rate-limit headers are still sent, with honest values.
 */
export function failStage(settings: Pick<Settings, "limitsOf" | "ietfRateLimitHeaders" | "onError">): (exchange: Exchange, thrown: unknown) => Response {
  return (exchange, thrown) => {
    exchange.aborted = thrown instanceof RequestAbortedError;
    const error = toApiError(thrown);
    exchange.errorCode = error.code;
    if (error.code === "internal_error") settings.onError(thrown, exchange.requestId);
    const { headers } = exchange;
    if (!("X-RateLimit-Limit" in headers)) {
      const limits = settings.limitsOf(exchange.identity?.caller);
      addUndecidedRateLimitHeaders(headers, limits, exchange.now, settings.ietfRateLimitHeaders, error.headers?.["Retry-After"]);
    }
    return toErrorResponse(error, headers);
  };
}
