import type { Settings } from "../options.js";
import type { Decision } from "../ports.js";
import type { UsageOutcome } from "../usage/usage-recorder.js";
import type { Arrival } from "./arrival.js";
import type { Failure } from "./fail.js";
import type { Identity } from "./identify.js";

/** How the limiter and `authorize` answered a caller: its ban, its limits, a key that expired or an old secret past its overlap. */
function outcomeOf(decision: Decision, failure: Failure | undefined): UsageOutcome {
  if (decision.bannedUntil !== undefined) return "banned";
  if (!decision.allowed) return "rateLimited";
  return failure?.error.code === "unauthorized" ? "unauthorized" : "admitted";
}

/**
 * Once the request is answered, its key's usage is counted (see `usageRecorder`) in the
 * minute of the limiter's instant: a caller's request by how it was answered, and a request
 * with a known key's secret that no longer works (`identity.refused`) as `unauthorized` of that
 * key, whatever the limit of its client's address said. A request the limiter did not decide
 * (storage failed first) is not counted: there is no instant of the store to count it at.
 */
export function recordUsageStage(
  settings: Pick<Settings, "usage">,
): (
  identity: Identity | undefined,
  decision: Decision | undefined,
  failure: Failure | undefined,
  arrival: Arrival,
) => void {
  const { usage } = settings;
  if (!usage) return () => {};
  return (identity, decision, failure, arrival) => {
    if (!identity || !decision) return;
    if (identity.caller)
      usage.count(identity.caller.id, outcomeOf(decision, failure), decision.now, true, arrival.started);
    else if (identity.refused)
      usage.count(identity.refused.keyId, "unauthorized", decision.now, false, arrival.started);
  };
}
