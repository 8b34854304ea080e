import { type ApiError, RequestAbortedError, toApiError, toErrorResponse } from "../errors.js";
import type { Settings } from "../options.js";
import type { Decision } from "../ports.js";
import { answerHeaders } from "../http/answer-headers.js";
import type { Arrival } from "./arrival.js";
import type { CallerLimits } from "../plans.js";

/** The Error answer to a request some stage or handler threw on, and what it was. */
export interface Failure {
  response: Response;
  error: ApiError;
  /** The client closed the connection before its request body arrived. */
  aborted: boolean;
}

/**
 * The catch stage: anything a stage or a handler threw becomes the Error answer. Unexpected
 * errors go to `onError` with the request id (the client sees `internal_error` only). When
 * storage failed before the limiter decided (the key lookup or the limiter itself), the
 * rate-limit headers are still sent, with honest values: the limits of the bucket reported
 * (the binding one once the limiter decided, else the caller's own once it was chosen), else
 * the Free plan's.
 */
export function failStage(
  settings: Pick<Settings, "limitsOf" | "ietfRateLimitHeaders" | "onError">,
): (thrown: unknown, arrival: Arrival, limits: CallerLimits | undefined, decision: Decision | undefined) => Failure {
  const { limitsOf, ietfRateLimitHeaders, onError } = settings;
  return (thrown, { requestId, now }, reported, decision) => {
    const error = toApiError(thrown);
    if (error.code === "internal_error") onError(thrown, requestId);
    const limits = reported ?? limitsOf(undefined);
    const rate = decision
      ? { limits, decision }
      : { limits, decision, retryAfter: error.headers?.["Retry-After"], now };
    const response = toErrorResponse(error, answerHeaders(requestId, rate, ietfRateLimitHeaders));
    return { response, error, aborted: thrown instanceof RequestAbortedError };
  };
}
