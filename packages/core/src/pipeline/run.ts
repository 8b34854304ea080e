import type { Context } from "../context.js";
import type { Settings } from "../options.js";
import type { ApiKeyRecord, Decision } from "../ports.js";
import { admittedHeaders, sharedHeaders } from "../http/answer-headers.js";
import type { Arrival } from "./arrival.js";
import type { CallerLimits } from "../plans.js";
import type { Routed } from "./choose-handler.js";

/**
 * Stage 7, run: the handler with its context (the stores, the path parameters, the caller, the
 * request's time and the answer's headers). Validation is the handler's first step. The
 * request's time is the instant the limiter decided at (its store's clock), so a deadline
 * such as the sunset passes at the same instant on every server.
 */
export function runStage(
  settings: Pick<
    Settings,
    "store" | "petPages" | "idempotency" | "basePath" | "deprecation" | "ietfRateLimitHeaders" | "bodyTimeoutMs"
  >,
): (
  routed: Routed,
  request: Request,
  caller: ApiKeyRecord | undefined,
  arrival: Arrival,
  limits: CallerLimits,
  decision: Decision,
) => Promise<Response> {
  const { store, petPages, idempotency, basePath, deprecation, ietfRateLimitHeaders, bodyTimeoutMs } = settings;
  const shared = sharedHeaders(ietfRateLimitHeaders);
  return ({ handler, params }, request, caller, { requestId }, limits, decision) => {
    const headers = admittedHeaders(requestId, limits, decision, shared, ietfRateLimitHeaders);
    const ctx: Context = {
      store,
      petPages,
      idempotency,
      params,
      now: decision.now,
      basePath,
      deprecation,
      headers,
      bodyTimeoutMs,
    };
    if (caller) ctx.caller = caller;
    return handler(request, ctx);
  };
}
