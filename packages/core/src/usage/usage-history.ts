import { ApiError } from "../errors.js";
import type { KeyUsage, KeyUsageTotal, UsageCounts, UsageResolution } from "../ports.js";

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

/** The buckets a key's usage is read in: minutes, hours (of minutes) or UTC days. */
export const USAGE_STEPS = ["minute", "hour", "day"] as const;
export type UsageStep = (typeof USAGE_STEPS)[number];

const STEP_MS: Record<UsageStep, number> = { minute: MINUTE, hour: HOUR, day: DAY };
/** What each step is read from. */
const RESOLUTION: Record<UsageStep, UsageResolution> = { minute: "minute", hour: "minute", day: "day" };
/** How far back each step reads: what the stores keep (see `USAGE_KEPT_MS`, which keeps a little more). */
const READABLE_MS: Record<UsageStep, number> = { minute: 48 * HOUR, hour: 48 * HOUR, day: 400 * DAY };
const READABLE_TEXT: Record<UsageStep, string> = {
  minute: "the last 48 hours",
  hour: "the last 48 hours",
  day: "the last 400 days",
};
/** The span read when no `from` is given: an hour of minutes, a day of hours, 30 days. */
const DEFAULT_SPAN_MS: Record<UsageStep, number> = { minute: HOUR, hour: 24 * HOUR, day: 30 * DAY };

/** The windows the top keys are ranked over: the last hour or day by minutes, the last 30 UTC days by days. */
export const USAGE_WINDOWS = ["1h", "24h", "30d"] as const;
export type UsageWindow = (typeof USAGE_WINDOWS)[number];
const WINDOW: Record<UsageWindow, { step: "minute" | "day"; buckets: number }> = {
  "1h": { step: "minute", buckets: 60 },
  "24h": { step: "minute", buckets: 24 * 60 },
  "30d": { step: "day", buckets: 30 },
};
/** How many keys the top keys name. */
export const TOP_KEYS = 20;

/** One bucket of a key's usage: `at` is the start of its minute, hour or UTC day (Unix ms). */
export interface UsageBucket extends UsageCounts {
  at: number;
}

/** A key's usage over a span, bucket by bucket, every bucket there (those without requests hold zeros). */
export interface KeyUsageHistory extends UsageHistory {
  keyId: string;
}

/** Usage over a span (of one key, or of several summed), bucket by bucket, every bucket there. */
export interface UsageHistory {
  step: UsageStep;
  /** The first bucket's start. */
  from: number;
  /** The span's end: the `to` asked for, or now if that is earlier. */
  to: number;
  buckets: UsageBucket[];
  totals: UsageCounts;
}

export interface KeyUsageQuery {
  /** Unix ms; default: an hour, a day or 30 days before `to`, by step. Read from the start of its bucket. */
  from?: number;
  /** Unix ms; default now. */
  to?: number;
  /** Default `hour`. */
  step?: UsageStep;
  /** Unix ms: what "now" is for how far back a read may go. Default `Date.now()`. */
  now?: number;
}

/** The keys that used the most over a window, most first. */
export interface TopKeys {
  window: UsageWindow;
  by: "requests" | "refusals";
  from: number;
  to: number;
  keys: (KeyUsageTotal & { requests: number; refusals: number })[];
}

const noCounts = (): UsageCounts => ({ admitted: 0, rateLimited: 0, banned: 0, unauthorized: 0 });

const invalid = (parameter: string, message: string) =>
  new ApiError("invalid_parameter", `Query parameter '${parameter}' ${message}`, [{ path: parameter, message }]);

/**
 * A key's usage by outcome, bucket by bucket, as its servers recorded it (up to 10 s late):
 * by minute or by hour over the last 48 hours, by UTC day over the last 400 days.
 * `invalid_parameter` (an `ApiError` naming `from`) for a `from` after `to` or older than kept.
 * @example const history = await readKeyUsage(keys, "key_abc", { step: "day", from: Date.now() - 30 * 86_400_000 });
 */
export async function readKeyUsage(
  keys: Pick<KeyUsage, "usage">,
  keyId: string,
  query: KeyUsageQuery = {},
): Promise<KeyUsageHistory> {
  return { keyId, ...(await readKeysUsage(keys, [keyId], query)) };
}

/**
 * The usage of several keys summed (an account's), bucket by bucket, read as `readKeyUsage`
 * reads one key's: each key's rows, added into the same buckets.
 * @example const history = await readKeysUsage(keys, ["key_a", "key_b"], { step: "day" });
 */
export async function readKeysUsage(
  keys: Pick<KeyUsage, "usage">,
  keyIds: readonly string[],
  query: KeyUsageQuery = {},
): Promise<UsageHistory> {
  const now = query.now ?? Date.now();
  const step = query.step ?? "hour";
  const size = STEP_MS[step];
  const asked = query.to ?? now;
  const from = query.from ?? asked - DEFAULT_SPAN_MS[step];
  if (from > asked) throw invalid("from", "must not be after 'to'");
  if (from < now - READABLE_MS[step])
    throw invalid("from", `must be within ${READABLE_TEXT[step]} when the step is ${step}: older usage is not kept`);
  const start = from - (from % size);
  const to = Math.min(asked, now);
  const buckets: UsageBucket[] = [];
  for (let at = start; at < to; at += size) buckets.push({ at, ...noCounts() });
  const totals = noCounts();
  const read = (keyId: string) => keys.usage({ keyId, resolution: RESOLUTION[step], from: start, to });
  // One key's rows at a time: a store's reads of an account's many keys queue rather than crowd.
  for (const keyId of buckets.length === 0 ? [] : keyIds) {
    for (const row of await read(keyId)) {
      const bucket = buckets[Math.floor((row.at - start) / size)];
      if (!bucket) continue;
      for (const count of [bucket, totals]) {
        count.admitted += row.admitted;
        count.rateLimited += row.rateLimited;
        count.banned += row.banned;
        count.unauthorized += row.unauthorized;
      }
    }
  }
  return { step, from: start, to, buckets, totals };
}

/**
 * The keys with the most requests (every outcome) or refusals (all but admitted) over the
 * last hour or day (by minute, the current one included) or the last 30 UTC days (today
 * included), most first, at most `limit` (default 20).
 * @example const { keys: busiest } = await readTopKeys(keys, { window: "24h", by: "refusals" });
 */
export async function readTopKeys(
  keys: Pick<KeyUsage, "topUsage">,
  query: { window?: UsageWindow; by?: "requests" | "refusals"; limit?: number; now?: number } = {},
): Promise<TopKeys> {
  const window = query.window ?? "24h";
  const by = query.by ?? "requests";
  const { step, buckets } = WINDOW[window];
  const now = query.now ?? Date.now();
  const to = now - (now % STEP_MS[step]) + STEP_MS[step];
  const from = to - buckets * STEP_MS[step];
  const totals = await keys.topUsage({ resolution: step, from, to, by, limit: query.limit ?? TOP_KEYS });
  return {
    window,
    by,
    from,
    to,
    keys: totals.map((total) => {
      const refusals = total.rateLimited + total.banned + total.unauthorized;
      return { ...total, requests: total.admitted + refusals, refusals };
    }),
  };
}
