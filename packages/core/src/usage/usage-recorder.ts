import type { KeyUsage, UsageCounts, UsageTally } from "../ports.js";

/** How a request of a key was answered, as its usage counts it. */
export type UsageOutcome = keyof UsageCounts;

/** The longest a count waits in a server before it is added to the store. */
export const USAGE_FLUSH_MS = 10_000;
/** Tallies kept waiting while the store fails to take them; past this many, the oldest are dropped. */
const TALLIES_KEPT = 100_000;
const MINUTE = 60_000;

/** A tally as it is counted: every field present from the start (0: none yet), so counting never reshapes it. */
interface Counting extends UsageCounts {
  keyId: string;
  minute: number;
  lastUsedAt: number;
}

/** What the store is given of a tally: `lastUsedAt` only when the key was identified. */
const toTally = ({ lastUsedAt, ...tally }: Counting): UsageTally => (lastUsedAt > 0 ? { ...tally, lastUsedAt } : tally);

/** Counts the keys' requests in memory and adds them to the store together. */
export interface UsageRecorder {
  /**
   * Counts one request of `keyId` in the minute of `at` (the limiter's instant); `identified`:
   * the key was the caller, so its last use moves to `at`. `monotonicNow` is the monotonic clock
   * at the request's arrival: past the flush bound since the first count waiting, it flushes.
   */
  count(keyId: string, outcome: UsageOutcome, at: number, identified: boolean, monotonicNow: number): void;
  /**
   * Adds every count waiting to the store now, after any write still running; rejects with the
   * store's failure, the counts kept for the next flush.
   */
  flush(): Promise<void>;
}

/**
 * The server's usage counts of each key, by minute of the limiter's clock, added to the store
 * (`KeyUsage.addUsage`, with the keys' last uses) in one write at most `USAGE_FLUSH_MS` after
 * the first of them was counted: by a timer (monotonic, never what keeps a process alive), or
 * where a runtime runs no timer between requests, by the next request after that bound. So a
 * request costs a Map lookup and an increment, not a write. What a crash loses is the counts
 * still waiting, at most that bound's worth; nothing is decided by them (the limiter decided
 * each request in its own store). A write that fails keeps its counts for the next one (a
 * write whose commit was answered too late, past the store's own bound, may then be counted
 * twice); a store failing for long drops the oldest past `TALLIES_KEPT`.
 */
export function usageRecorder(
  usage: Pick<KeyUsage, "addUsage">,
  /** The monotonic clock `count`'s `monotonicNow` reads (createPetstore's `monotonicClock`). */
  monotonic: () => number = () => performance.now(),
): UsageRecorder {
  /** Each key's tally of its latest minute. */
  let current = new Map<string, Counting>();
  /** Tallies of earlier minutes, waiting with `current`'s. */
  let earlier: Counting[] = [];
  /** The monotonic clock at the first count waiting; undefined when none waits. */
  let firstAt: number | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let writing: Promise<void> = Promise.resolve();

  const write = async (tallies: Counting[]) => {
    try {
      await usage.addUsage(tallies.map(toTally));
    } catch (error) {
      earlier = [...tallies, ...earlier].slice(-TALLIES_KEPT);
      startWaiting(monotonic());
      throw error;
    }
  };

  function flush(): Promise<void> {
    clearTimeout(timer);
    [timer, firstAt] = [undefined, undefined];
    const tallies = [...earlier, ...current.values()];
    [earlier, current] = [[], new Map()];
    if (tallies.length > 0) writing = writing.catch(() => {}).then(() => write(tallies));
    return writing;
  }

  function startWaiting(now: number): void {
    if (firstAt !== undefined) return;
    firstAt = now;
    timer = setTimeout(() => void flush().catch(() => {}), USAGE_FLUSH_MS);
    // Never what keeps a process alive (Node, Bun and Deno have unref; elsewhere it does not matter).
    (timer as { unref?: () => void }).unref?.();
  }

  return {
    count(keyId, outcome, at, identified, monotonicNow) {
      const minute = at - (at % MINUTE);
      let tally = current.get(keyId);
      if (tally === undefined || tally.minute !== minute) {
        // A key's minute changed (or went back, at another server's instant): the old one waits as it is.
        if (tally !== undefined) earlier.push(tally);
        tally = { keyId, minute, admitted: 0, rateLimited: 0, banned: 0, unauthorized: 0, lastUsedAt: 0 };
        current.set(keyId, tally);
        startWaiting(monotonicNow);
      }
      tally[outcome]++;
      if (identified && at > tally.lastUsedAt) tally.lastUsedAt = at;
      if (monotonicNow - firstAt! >= USAGE_FLUSH_MS) void flush().catch(() => {});
    },
    flush,
  };
}
