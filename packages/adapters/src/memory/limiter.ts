import {
  type BucketState,
  CLOCK_STEP_MS,
  type Decision,
  type HitInput,
  type RateLimiter,
  type WindowPair,
  type WindowState,
} from "@petstore/core";

export interface MemoryLimiterOptions {
  /**
   * Most anonymous (per-address) buckets kept; past it the least recently used is dropped.
   * Keyed buckets are bounded by the number of keys and are never evicted. Default 100,000.
   */
  maxAnonymousBuckets?: number;
  /** Unix ms: the clock windows and bans are decided by (this process's). Default `Date.now`; tests move their own. */
  clock?: (() => number) | undefined;
}

/** The memory limiter, and how many buckets it holds (so tests can watch its memory stay bounded). */
export interface MemoryLimiter extends Required<RateLimiter> {
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
  /** The instant of the bucket's last decision (see `RateLimiter` for what a clock stepped back does). */
  last: number;
}

const SWEEP_EVERY = 4096;

/**
 * Fixed-window counters in Maps, decided synchronously (so atomically) per request, over the
 * request's bucket and the buckets it shares at once.
 * Memory stays bounded: anonymous buckets are capped (LRU), expired buckets are swept every
 * 4096 hits, and there is no timer per bucket. Keyed buckets (one per API key) are never
 * evicted, as accounts' are, so they skip the LRU bookkeeping.
 */
export function memoryLimiter(options: MemoryLimiterOptions = {}): MemoryLimiter {
  const maxAnonymous = options.maxAnonymousBuckets ?? 100_000;
  const clock = options.clock ?? Date.now;
  // Map order is insertion order; re-inserting on every hit makes the first entry the LRU one.
  const anonymous = new Map<string, Bucket>();
  const keyed = new Map<string, Bucket>();
  let hits = 0;

  function sweep(now: number) {
    for (const map of [anonymous, keyed])
      for (const [name, bucket] of map) if (bucket.expiresAt <= now) map.delete(name);
  }

  /** The bucket as a hit at `read` finds it: none when it is over, or when the clock stepped back since its last decision. */
  function found(map: Map<string, Bucket>, name: string, read: number): Bucket | undefined {
    const bucket = map.get(name);
    return bucket && bucket.expiresAt > read && bucket.last - read <= CLOCK_STEP_MS ? bucket : undefined;
  }

  /**
   * Anonymous buckets (an address's, the admin listener's failures per address: any bucket
   * that is not a key's or an account's) are capped and evicted least recently used first.
   * Keys' and accounts' never: their names begin with the account's group (`{acct_...}`), or
   * `key:` for a key counted alone.
   */
  const isAnonymous = (name: string) => !name.startsWith("{") && !name.startsWith("key:");

  /** The bucket a hit at `read` counts in, made when there is none (a new one is last decided at `read`). */
  function taken(name: string, read: number): Bucket {
    const anonymousOne = isAnonymous(name);
    const map = anonymousOne ? anonymous : keyed;
    let bucket = found(map, name, read);
    if (!bucket) {
      bucket = { starts: [], counts: [], refusalsStart: 0, refusals: 0, bannedUntil: 0, expiresAt: 0, last: read };
      map.set(name, bucket);
    } else if (anonymousOne) {
      map.delete(name);
      map.set(name, bucket);
    }
    if (anonymousOne && anonymous.size > maxAnonymous) anonymous.delete(anonymous.keys().next().value!);
    return bucket;
  }

  /** Moves every window of the bucket forward to the one containing `now` (a window that rolled over starts at 0); true when each has room. */
  function current(bucket: Bucket, windows: WindowPair, now: number): boolean {
    bucket.last = now;
    let room = true;
    for (let i = 0; i < windows.length; i++) {
      const length = windows[i]!.seconds * 1000;
      const start = now - (now % length);
      if (bucket.starts[i] === undefined || bucket.starts[i]! < start) {
        bucket.starts[i] = start;
        bucket.counts[i] = 0;
      }
      if (bucket.counts[i]! >= windows[i]!.limit) room = false;
    }
    return room;
  }

  /** Each window as decided, and the bucket's end of life moved to its last window's reset or its ban's end. */
  function statesOf(bucket: Bucket, windows: WindowPair, refused: boolean): WindowState[] {
    const states: WindowState[] = [];
    let expiresAt = bucket.bannedUntil;
    for (let i = 0; i < windows.length; i++) {
      const window = windows[i]!;
      const count = bucket.counts[i]!;
      const resetAt = bucket.starts[i]! + window.seconds * 1000;
      if (resetAt > expiresAt) expiresAt = resetAt;
      states.push({
        name: window.name,
        limit: window.limit,
        remaining: Math.max(0, window.limit - count),
        resetAt,
        exceeded: refused && count >= window.limit,
      });
    }
    bucket.expiresAt = expiresAt;
    return states;
  }

  function hit({ bucket: name, windows, ban, shared }: HitInput): Decision {
    const read = clock();
    if (++hits % SWEEP_EVERY === 0) sweep(read);
    const bucket = taken(name, read);
    const others = shared?.map((s) => taken(s.bucket, read));
    // A late read (within CLOCK_STEP_MS) is decided at the latest last instant of its buckets.
    let now = Math.max(read, bucket.last);
    if (others) for (const other of others) now = Math.max(now, other.last);

    const banned = bucket.bannedUntil > now;
    let allowed = current(bucket, windows, now) && !banned;
    if (others)
      for (let k = 0; k < others.length; k++) if (!current(others[k]!, shared![k]!.windows, now)) allowed = false;

    let banStarted = false;
    if (allowed) {
      for (let i = 0; i < windows.length; i++) bucket.counts[i]! += 1;
      if (others) for (const other of others) for (let i = 0; i < other.counts.length; i++) other.counts[i]! += 1;
    } else if (!banned) {
      // A refusal consumes nothing, but enough of them in one window earn the caller's bucket a ban.
      if (bucket.refusalsStart !== bucket.starts[0]) bucket.refusals = 0;
      bucket.refusalsStart = bucket.starts[0]!;
      bucket.refusals += 1;
      banStarted = bucket.refusals > ban.threshold && ban.seconds > 0;
      if (banStarted) bucket.bannedUntil = now + ban.seconds * 1000;
    }

    const refused = !allowed && !banned;
    const decision: Decision = { allowed, windows: statesOf(bucket, windows, refused), now };
    if (others) decision.shared = others.map((other, k) => statesOf(other, shared![k]!.windows, refused));
    if (bucket.bannedUntil <= now) return decision;
    decision.bannedUntil = bucket.bannedUntil;
    if (banStarted) decision.banStarted = true;
    return decision;
  }

  function peek({ bucket: name, windows }: HitInput): BucketState {
    const read = clock();
    const bucket = found(isAnonymous(name) ? anonymous : keyed, name, read);
    const now = Math.max(read, bucket?.last ?? read);
    const states = windows.map((window, i): WindowState => {
      const length = window.seconds * 1000;
      const start = now - (now % length);
      // A window that ended counts nothing now (as a hit would find it).
      const current = bucket?.starts[i] !== undefined && bucket.starts[i]! >= start;
      return {
        name: window.name,
        limit: window.limit,
        remaining: Math.max(0, window.limit - (current ? bucket!.counts[i]! : 0)),
        resetAt: (current ? bucket!.starts[i]! : start) + length,
        exceeded: false,
      };
    });
    return bucket && bucket.bannedUntil > now
      ? { windows: states, bannedUntil: bucket.bannedUntil, now }
      : { windows: states, now };
  }

  function unban(name: string): boolean {
    const read = clock();
    const bucket = found(isAnonymous(name) ? anonymous : keyed, name, read);
    if (!bucket || bucket.bannedUntil <= Math.max(read, bucket.last)) return false;
    bucket.bannedUntil = 0;
    bucket.refusals = 0;
    return true;
  }

  return {
    hit: async (input) => hit(input),
    peek: async (input) => peek(input),
    unban: async (bucket) => unban(bucket),
    size: () => anonymous.size + keyed.size,
  };
}
