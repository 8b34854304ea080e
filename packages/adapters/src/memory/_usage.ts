import {
  type KeyUsage,
  type KeyUsageTotal,
  USAGE_KEPT_MS,
  type UsageCounts,
  type UsageResolution,
  type UsageRow,
} from "@petstore/core";

const DAY = 86_400_000;

const noCounts = (): UsageCounts => ({ admitted: 0, rateLimited: 0, banned: 0, unauthorized: 0 });

function add(into: UsageCounts, counts: UsageCounts): void {
  into.admitted += counts.admitted;
  into.rateLimited += counts.rateLimited;
  into.banned += counts.banned;
  into.unauthorized += counts.unauthorized;
}

const RANKED = {
  requests: (counts: UsageCounts) => counts.admitted + counts.rateLimited + counts.banned + counts.unauthorized,
  refusals: (counts: UsageCounts) => counts.rateLimited + counts.banned + counts.unauthorized,
};

/** The usage history of a memory key store, and what its list orders by. */
interface MemoryUsage {
  usage: KeyUsage;
  /** The key's requests admitted in the UTC day of `now`. */
  admittedToday(keyId: string, now: number): number;
}

/**
 * Usage history in memory: per resolution, the counts of each key by the start of their span.
 * Spans first, so that a sweep drops whole spans and a read walks only the spans it covers
 * (at most 2,940 minutes or 401 days, whatever the number of keys). `lastUsed` moves a key's
 * last use (the key store's record).
 */
export function memoryUsage(clock: () => number, lastUsed: (keyId: string, at: number) => void): MemoryUsage {
  const spans: Record<UsageResolution, Map<number, Map<string, UsageCounts>>> = { minute: new Map(), day: new Map() };

  const countsOf = (resolution: UsageResolution, at: number, keyId: string) => {
    let keys = spans[resolution].get(at);
    if (!keys) spans[resolution].set(at, (keys = new Map()));
    let counts = keys.get(keyId);
    if (!counts) keys.set(keyId, (counts = noCounts()));
    return counts;
  };

  /** The spans of `resolution` that start in `[from, to)`. */
  function* within(resolution: UsageResolution, from: number, to: number) {
    for (const [at, keys] of spans[resolution]) if (at >= from && at < to) yield [at, keys] as const;
  }

  const usage: KeyUsage = {
    async addUsage(tallies) {
      for (const tally of tallies) {
        add(countsOf("minute", tally.minute, tally.keyId), tally);
        add(countsOf("day", tally.minute - (tally.minute % DAY), tally.keyId), tally);
        if (tally.lastUsedAt !== undefined) lastUsed(tally.keyId, tally.lastUsedAt);
      }
      const now = clock();
      for (const resolution of ["minute", "day"] as const) {
        for (const at of spans[resolution].keys())
          if (at < now - USAGE_KEPT_MS[resolution]) spans[resolution].delete(at);
      }
    },
    async usage({ keyId, resolution, from, to }) {
      const rows: UsageRow[] = [];
      for (const [at, keys] of within(resolution, from, to)) {
        const counts = keys.get(keyId);
        if (counts) rows.push({ at, ...counts });
      }
      return rows.sort((a, b) => a.at - b.at);
    },
    async topUsage({ resolution, from, to, by, limit }) {
      const totals = new Map<string, KeyUsageTotal>();
      for (const [, keys] of within(resolution, from, to)) {
        for (const [keyId, counts] of keys) {
          let total = totals.get(keyId);
          if (!total) totals.set(keyId, (total = { keyId, ...noCounts() }));
          add(total, counts);
        }
      }
      const ranked = RANKED[by];
      return [...totals.values()]
        .filter((total) => ranked(total) > 0)
        .sort((a, b) => ranked(b) - ranked(a) || (a.keyId < b.keyId ? -1 : 1))
        .slice(0, limit);
    },
  };
  return {
    usage,
    admittedToday: (keyId, now) => spans.day.get(now - (now % DAY))?.get(keyId)?.admitted ?? 0,
  };
}
