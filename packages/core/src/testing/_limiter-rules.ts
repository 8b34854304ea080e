import { CLOCK_STEP_MS, type Decision, type HitInput, type WindowState } from "../ports.js";

interface BucketState {
  /** Start (Unix ms) and admitted count of each window, in the order of the hit's windows. */
  windows: { start: number; count: number }[];
  /** Refusals counted toward a ban, within the first window that started at `start`. */
  refusals: { start: number; count: number };
  /** Unix ms at which the bucket's ban ends; 0 when it was never banned. */
  bannedUntil: number;
  /** The instant of the bucket's last decision. */
  last: number;
}

/**
 * The rate limit's rules as plain code (docs/design.md, "Rate limits"; `RateLimiter` in
 * ports.ts), for the property tests of the contract: given the same hits at the same instants
 * (the store's clock as read, steps included), a limiter must decide exactly what this does. A reference, not an adapter: one hit at a
 * time, every bucket kept forever (a bucket whose windows and ban ended decides as a new one).
 */
export function limiterRules(): (input: HitInput, read: number) => Decision {
  const buckets = new Map<string, BucketState>();
  return ({ bucket: name, windows, ban }, read) => {
    const kept = buckets.get(name);
    // A clock read more than CLOCK_STEP_MS before the bucket's last decision stepped back: the
    // bucket starts over, as new. Less than that is a late statement, decided at the last instant.
    const bucket =
      kept && kept.last - read <= CLOCK_STEP_MS
        ? kept
        : { windows: [], refusals: { start: Number.NaN, count: 0 }, bannedUntil: 0, last: read };
    buckets.set(name, bucket);
    const now = Math.max(read, bucket.last);
    bucket.last = now;
    // Fixed windows aligned to the Unix epoch.
    const current = windows.map((window, i) => {
      const length = window.seconds * 1000;
      const start = now - (now % length);
      const stored = bucket.windows[i];
      return stored !== undefined && stored.start >= start ? stored : { start, count: 0 };
    });
    bucket.windows = current;

    // During a ban every hit is refused and changes nothing: no count, no refusal, no longer ban.
    const banned = bucket.bannedUntil > now;
    const allowed = !banned && current.every((window, i) => window.count < windows[i]!.limit);
    let banStarted = false;
    if (allowed) {
      for (const window of current) window.count += 1;
    } else if (!banned) {
      // A refusal consumes nothing; more than `threshold` of them within one first window ban the bucket.
      if (bucket.refusals.start !== current[0]!.start) bucket.refusals = { start: current[0]!.start, count: 0 };
      bucket.refusals.count += 1;
      banStarted = bucket.refusals.count > ban.threshold && ban.seconds > 0;
      if (banStarted) bucket.bannedUntil = now + ban.seconds * 1000;
    }

    const states = windows.map(
      (window, i): WindowState => ({
        name: window.name,
        limit: window.limit,
        remaining: Math.max(0, window.limit - current[i]!.count),
        resetAt: current[i]!.start + window.seconds * 1000,
        // The windows that refused this request; none during a ban, which refused it first.
        exceeded: !allowed && !banned && current[i]!.count >= window.limit,
      }),
    );
    if (bucket.bannedUntil <= now) return { allowed, windows: states, now };
    return banStarted
      ? { allowed, windows: states, bannedUntil: bucket.bannedUntil, banStarted: true, now }
      : { allowed, windows: states, bannedUntil: bucket.bannedUntil, now };
  };
}
