import type { Decision, HitInput, RateLimiter, WindowState } from "@petstore/core";

export interface MemoryLimiterOptions {
  /**
   * Most anonymous (per-address) buckets kept; past it the least recently used is dropped.
   * Keyed buckets are bounded by the number of keys and are never evicted. Default 100,000.
   */
  maxAnonymousBuckets?: number;
}

/** The memory limiter, and how many buckets it holds (so tests can watch its memory stay bounded). */
export interface MemoryLimiter extends RateLimiter {
  size(): number;
}

interface Bucket {
  /** Start (Unix ms) and count of each window, in the order of `HitInput.windows`. */
  starts: number[];
  counts: number[];
  /** Refusals counted within the first window that started at `refusalsStart`. */
  refusalsStart: number;
  refusals: number;
  bannedUntil: number;
  /** Unix ms at which every window and the ban are over: the bucket can be dropped. */
  expiresAt: number;
}

const SWEEP_EVERY = 4096;

/**
 * Fixed-window counters in one Map, decided synchronously (so atomically) per request.
 * Memory stays bounded: anonymous buckets are capped (LRU), expired buckets are swept every
 * 4096 hits, and there is no timer per bucket.
 */
export function memoryLimiter(options: MemoryLimiterOptions = {}): MemoryLimiter {
  const maxAnonymous = options.maxAnonymousBuckets ?? 100_000;
  // Map order is insertion order; re-inserting on every hit makes the first entry the LRU one.
  const anonymous = new Map<string, Bucket>();
  const keyed = new Map<string, Bucket>();
  let hits = 0;

  function sweep(now: number) {
    for (const map of [anonymous, keyed]) for (const [name, bucket] of map) if (bucket.expiresAt <= now) map.delete(name);
  }

  function hit({ bucket: name, windows, ban, now }: HitInput): Decision {
    if (++hits % SWEEP_EVERY === 0) sweep(now);
    const map = name.startsWith("key:") ? keyed : anonymous;
    let bucket = map.get(name);
    if (bucket && bucket.expiresAt <= now) bucket = undefined;
    bucket ??= { starts: [], counts: [], refusalsStart: 0, refusals: 0, bannedUntil: 0, expiresAt: 0 };
    map.delete(name);
    map.set(name, bucket);
    if (map === anonymous && anonymous.size > maxAnonymous) anonymous.delete(anonymous.keys().next().value!);

    const starts = windows.map((w) => now - (now % (w.seconds * 1000)));
    const counts = windows.map((_, i) => (bucket.starts[i] === starts[i] ? bucket.counts[i]! : 0));
    const banned = bucket.bannedUntil > now;
    const exceeded = windows.map((w, i) => !banned && counts[i]! >= w.limit);
    const allowed = !banned && !exceeded.includes(true);

    if (allowed) {
      for (let i = 0; i < counts.length; i++) counts[i]! += 1;
    } else if (!banned) {
      // A refusal consumes nothing, but enough of them in one window earn a ban.
      if (bucket.refusalsStart !== starts[0]) bucket.refusals = 0;
      bucket.refusalsStart = starts[0]!;
      bucket.refusals += 1;
      if (bucket.refusals > ban.threshold) bucket.bannedUntil = now + ban.seconds * 1000;
    }
    bucket.starts = starts;
    bucket.counts = counts;
    bucket.expiresAt = Math.max(bucket.bannedUntil, ...windows.map((w, i) => starts[i]! + w.seconds * 1000));

    const states: WindowState[] = windows.map((w, i) => ({
      name: w.name,
      limit: w.limit,
      remaining: Math.max(0, w.limit - counts[i]!),
      resetAt: starts[i]! + w.seconds * 1000,
      exceeded: exceeded[i]!,
    }));
    return bucket.bannedUntil > now ? { allowed: false, windows: states, bannedUntil: bucket.bannedUntil } : { allowed, windows: states };
  }

  return { hit: async (input) => hit(input), size: () => anonymous.size + keyed.size };
}
