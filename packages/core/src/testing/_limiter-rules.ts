import { CLOCK_STEP_MS, type Decision, type HitInput, type WindowPair, type WindowState } from "../ports.js";

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

/** A bucket never seen, or started over: its first decision will be at `read`. */
const fresh = (read: number): BucketState => ({
  windows: [],
  refusals: { start: Number.NaN, count: 0 },
  bannedUntil: 0,
  last: read,
});

/**
 * The rate limit's rules as plain code (docs/design.md, "Rate limits"; `RateLimiter` in
 * ports.ts), for the property tests of the contract: given the same hits at the same instants
 * (the store's clock as read, steps included), a limiter must decide exactly what this does.
 * A reference, not an adapter: one hit at a time, every bucket kept forever (a bucket whose
 * windows and ban ended decides as a new one). A hit with shared buckets is decided over all
 * of them at once: at the latest instant any of them was last decided at, admitted only when
 * every window of every one has room; refusals count toward the ban of the hit's own bucket.
 */
export function limiterRules(): (input: HitInput, read: number) => Decision {
  const buckets = new Map<string, BucketState>();
  /** The bucket as a hit at `read` finds it: started over when the clock stepped back past CLOCK_STEP_MS since its last decision. */
  const found = (name: string, read: number) => {
    const kept = buckets.get(name);
    const bucket = kept && kept.last - read <= CLOCK_STEP_MS ? kept : fresh(read);
    buckets.set(name, bucket);
    return bucket;
  };
  /** Each window of the bucket moved forward to the one containing `now` (fixed windows aligned to the Unix epoch). */
  const currentWindows = (bucket: BucketState, windows: WindowPair, now: number) => {
    bucket.windows = windows.map((window, i) => {
      const length = window.seconds * 1000;
      const start = now - (now % length);
      const stored = bucket.windows[i];
      return stored !== undefined && stored.start >= start ? stored : { start, count: 0 };
    });
    bucket.last = now;
    return bucket.windows;
  };
  return ({ bucket: name, windows, ban, shared = [] }, read) => {
    const own = found(name, read);
    const others = shared.map((s) => found(s.bucket, read));
    // A late read (within CLOCK_STEP_MS) is decided at the latest last decision of its buckets.
    const now = Math.max(read, own.last, ...others.map((b) => b.last));
    const current = currentWindows(own, windows, now);
    const sharedCurrent = others.map((b, k) => currentWindows(b, shared[k]!.windows, now));
    const hasRoom = (counts: { count: number }[], ws: WindowPair) => counts.every((w, i) => w.count < ws[i]!.limit);

    // During a ban every hit is refused and changes nothing: no count, no refusal, no longer ban.
    const banned = own.bannedUntil > now;
    const allowed =
      !banned && hasRoom(current, windows) && sharedCurrent.every((counts, k) => hasRoom(counts, shared[k]!.windows));
    let banStarted = false;
    if (allowed) {
      for (const window of [...current, ...sharedCurrent.flat()]) window.count += 1;
    } else if (!banned) {
      // A refusal consumes nothing; more than `threshold` of them within one first window ban the bucket.
      if (own.refusals.start !== current[0]!.start) own.refusals = { start: current[0]!.start, count: 0 };
      own.refusals.count += 1;
      banStarted = own.refusals.count > ban.threshold && ban.seconds > 0;
      if (banStarted) own.bannedUntil = now + ban.seconds * 1000;
    }

    const states = (counts: { start: number; count: number }[], ws: WindowPair) =>
      ws.map(
        (window, i): WindowState => ({
          name: window.name,
          limit: window.limit,
          remaining: Math.max(0, window.limit - counts[i]!.count),
          resetAt: counts[i]!.start + window.seconds * 1000,
          // The windows that refused this request; none during a ban, which refused it first.
          exceeded: !allowed && !banned && counts[i]!.count >= window.limit,
        }),
      );
    const decided: Decision = { allowed, windows: states(current, windows), now };
    if (shared.length > 0) decided.shared = sharedCurrent.map((counts, k) => states(counts, shared[k]!.windows));
    if (own.bannedUntil <= now) return decided;
    return banStarted
      ? { ...decided, bannedUntil: own.bannedUntil, banStarted: true }
      : { ...decided, bannedUntil: own.bannedUntil };
  };
}
