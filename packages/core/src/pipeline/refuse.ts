import { ApiError } from "../errors.js";
import type { Decision } from "../ports.js";
import { retryAfterSeconds } from "../http/answer-headers.js";

/**
 * Stage 4, refuse: a banned bucket gets `429 temporarily_banned`, a request over a limit
 * `429 rate_limited` (the answer's headers say when to retry).
 */
export function refuse(decision: Decision): void {
  if (decision.bannedUntil !== undefined) {
    throw new ApiError(
      "temporarily_banned",
      `Temporarily banned after repeated requests over the limit; retry after ${retryAfterSeconds(decision)} s`,
    );
  }
  if (!decision.allowed)
    throw new ApiError("rate_limited", `Rate limit exceeded; retry after ${retryAfterSeconds(decision)} s`);
}
