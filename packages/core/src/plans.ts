import type { ApiKeyRecord, BanPolicy, Decision, PlanName, WindowSpec, WindowState } from "../ports.js";

/** Requests per minute and per day of a plan. */
export interface PlanLimits {
  perMinute: number;
  perDay: number;
}

/**
 * The specification's plans. Enterprise numbers are agreed per key (set when the key is
 * made); these are its fallback for a key stored without them.
 */
export const DEFAULT_PLANS: Readonly<Record<PlanName, PlanLimits>> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
  enterprise: { perMinute: 1_000, perDay: 100_000 },
};

export const DEFAULT_BAN: BanPolicy = { threshold: 30, seconds: 600 };

/** A caller's windows, and their `RateLimit-Policy` header, which only changes with them. */
export interface CallerLimits {
  windows: WindowSpec[];
  policy: string;
}

/**
 * The minute and day windows of a caller; anonymous callers get the Free plan's. Memoized
 * per key record (core's key cache hands out the same record for seconds at a time), since
 * this runs on every request.
 */
export function limitsResolver(plans: Record<PlanName, PlanLimits>): (caller: ApiKeyRecord | undefined) => CallerLimits {
  const make = (caller: ApiKeyRecord | undefined): CallerLimits => {
    const plan = plans[caller?.plan ?? "free"];
    const windows = [
      { name: "minute", limit: caller?.perMinute ?? plan.perMinute, seconds: 60 },
      { name: "day", limit: caller?.perDay ?? plan.perDay, seconds: 86_400 },
    ];
    return { windows, policy: windows.map((w) => `"${w.name}";q=${w.limit};w=${w.seconds}`).join(", ") };
  };
  const anonymous = make(undefined);
  const byRecord = new WeakMap<ApiKeyRecord, CallerLimits>();
  return (caller) => {
    if (!caller) return anonymous;
    let limits = byRecord.get(caller);
    if (!limits) byRecord.set(caller, (limits = make(caller)));
    return limits;
  };
}

/**
 * The window the headers describe: on a refusal the refusing window that resets last (the
 * one whose reset admits the request); otherwise the one with the fewest requests left, on a
 * tie the one that resets later.
 */
function reportedWindow(decision: Decision): WindowState {
  // A loop rather than filter and reduce: this runs on every request.
  const refusing = !decision.allowed && decision.windows.some((w) => w.exceeded);
  let best: WindowState | undefined;
  for (const w of decision.windows) {
    if (refusing && !w.exceeded) continue;
    if (!best) best = w;
    else if (!decision.allowed) best = w.resetAt > best.resetAt ? w : best;
    else if (w.remaining !== best.remaining) best = w.remaining < best.remaining ? w : best;
    else best = w.resetAt > best.resetAt ? w : best;
  }
  return best!;
}

const ceilSeconds = (ms: number) => Math.ceil(ms / 1000);

/**
 * Adds `X-RateLimit-*`, the IETF draft `RateLimit`/`RateLimit-Policy` and, on a 429,
 * `Retry-After` to `headers` (written into, not copied: this runs on every request).
 */
export function addRateLimitHeaders(headers: Record<string, string>, decision: Decision, limits: CallerLimits, now: number, ietf: boolean): void {
  const banned = decision.bannedUntil !== undefined;
  // A ban is earned in the first window (the minute), so that is the one a ban reports.
  const window = banned ? decision.windows[0]! : reportedWindow(decision);
  // During a ban nothing is admitted, so nothing remains until the ban lifts.
  const resetAt = banned ? Math.max(window.resetAt, decision.bannedUntil!) : window.resetAt;
  const remaining = banned ? 0 : window.remaining;
  headers["X-RateLimit-Limit"] = String(window.limit);
  headers["X-RateLimit-Remaining"] = String(remaining);
  headers["X-RateLimit-Reset"] = String(ceilSeconds(resetAt));
  if (ietf) {
    headers["RateLimit-Policy"] = limits.policy;
    headers.RateLimit = `"${window.name}";r=${remaining};t=${Math.max(0, ceilSeconds(resetAt - now))}`;
  }
  if (!decision.allowed) {
    // RFC 9110 delta-seconds, at least 1: the request is admitted once this has passed.
    const until = banned ? decision.bannedUntil! : window.resetAt;
    headers["Retry-After"] = String(Math.max(1, ceilSeconds(until - now)));
  }
}

/**
 * The rate-limit headers when the limiter could not decide (storage failed first, a 503):
 * honest values, not invented counts. The caller's limit of the first window (the anonymous
 * one's when no key was identified), nothing remaining, and a reset no earlier than the
 * answer's `Retry-After` (one second when it has none).
 */
export function addUndecidedRateLimitHeaders(headers: Record<string, string>, limits: CallerLimits, now: number, ietf: boolean, retryAfter = "1"): void {
  const window = limits.windows[0]!;
  const waitSeconds = Math.max(1, Number(retryAfter) || 1);
  headers["X-RateLimit-Limit"] = String(window.limit);
  headers["X-RateLimit-Remaining"] = "0";
  headers["X-RateLimit-Reset"] = String(ceilSeconds(now) + waitSeconds);
  if (ietf) {
    headers["RateLimit-Policy"] = limits.policy;
    headers.RateLimit = `"${window.name}";r=0;t=${waitSeconds}`;
  }
}
