import { ApiError } from "../errors.js";
import type { Settings } from "../options.js";
import type { Decision } from "../ports.js";
import type { Exchange } from "./exchange.js";
import { addRateLimitHeaders } from "./rate-limit.js";

/** Buckets whose bans this process has reported; past this many, the oldest is forgotten. */
const BANS_KEPT = 1_000;

/**
 * Stage 3, refuse: the decision's rate-limit headers go on the answer, whatever it will be;
 * then a banned bucket gets `429 temporarily_banned` and a request over a limit
 * `429 rate_limited`. Marks the refusal that began a ban (`banStarted`), once per ban.
 */
export function refuseStage(settings: Pick<Settings, "ban" | "ietfRateLimitHeaders">): (exchange: Exchange, decision: Decision) => void {
  const banMs = settings.ban.seconds * 1000;
  /** The end of the latest ban each bucket began, so a ban is reported once (bounded: the oldest go first). */
  const bansSeen = new Map<string, number>();
  /** A ban began at this refusal: it lasts exactly `ban.seconds` from now, and this process has not reported it yet. */
  function isNewBan(bucket: string, bannedUntil: number, now: number): boolean {
    if (bannedUntil !== now + banMs || bansSeen.get(bucket) === bannedUntil) return false;
    if (bansSeen.size >= BANS_KEPT) bansSeen.delete(bansSeen.keys().next().value!);
    bansSeen.set(bucket, bannedUntil);
    return true;
  }

  return (exchange, decision) => {
    const { headers, now } = exchange;
    addRateLimitHeaders(headers, decision, exchange.limits!, now, settings.ietfRateLimitHeaders);
    if (decision.bannedUntil !== undefined) {
      exchange.banStarted = isNewBan(exchange.bucket, decision.bannedUntil, now);
      throw new ApiError("temporarily_banned", `Temporarily banned after repeated requests over the limit; retry after ${headers["Retry-After"]} s`);
    }
    if (!decision.allowed) throw new ApiError("rate_limited", `Rate limit exceeded; retry after ${headers["Retry-After"]} s`);
  };
}
