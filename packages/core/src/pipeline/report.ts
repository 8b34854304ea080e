import type { ResponseEvent, Settings } from "../options.js";
import type { Decision } from "../ports.js";
import type { Arrival } from "./arrival.js";
import type { Bucket } from "./choose-bucket.js";
import type { Failure } from "./fail.js";
import type { RouteMatch } from "../routes.js";
import type { ClientInfo } from "../http/client-address.js";
import type { Identity } from "./identify.js";

/** What the stages decided about one request, each as it returned it; undefined where a stage did not run. */
export interface Findings {
  request: Request;
  /** What the host said of the client (its address). */
  info: ClientInfo | undefined;
  arrival: Arrival;
  match: RouteMatch | undefined;
  identity: Identity | undefined;
  bucket: Bucket | undefined;
  decision: Decision | undefined;
  failure: Failure | undefined;
}

/**
 * The last stage: `onResponse` hears of the answer with what the stages found (nothing to do
 * without it).
 */
export function reportStage(
  settings: Pick<Settings, "onResponse" | "monotonicClock">,
): (response: Response, findings: Findings) => void {
  const { onResponse, monotonicClock } = settings;
  if (!onResponse) return () => {};
  return (response, { request, info, arrival, match, identity, bucket, decision, failure }) => {
    const event: ResponseEvent = {
      request,
      response,
      requestId: arrival.requestId,
      pathname: arrival.pathname,
      durationMs: monotonicClock() - arrival.started,
    };
    if (identity?.caller) {
      event.keyId = identity.caller.id;
      event.plan = identity.caller.plan;
    }
    if (identity?.keyCache) event.keyCache = identity.keyCache;
    if (bucket?.client !== undefined) event.clientAddress = bucket.client;
    // A path beside the API had no bucket: its client is the host's (looked up only here).
    else if (!match && !identity && info?.clientAddress !== undefined) event.clientAddress = info.clientAddress;
    // `route` is known for every path routing would serve, whatever the answer (a 401 or 429 too).
    if (match) event.route = match.route.path;
    if (failure) event.errorCode = failure.error.code;
    if (failure?.aborted) event.aborted = true;
    if (decision?.banStarted) event.banStarted = true;
    onResponse(event);
  };
}
