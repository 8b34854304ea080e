import * as v from "valibot";
import type { KeyUsageHistory, TopKeys, UsageHistory } from "../usage/usage-history.js";
import { USAGE_STEPS, USAGE_WINDOWS } from "../usage/usage-history.js";
import { iso } from "./key-view.js";

const Iso = v.pipe(v.string(), v.isoTimestamp());
const Count = v.pipe(v.number(), v.integer(), v.minValue(0));
const COUNTS = { admitted: Count, rateLimited: Count, banned: Count, unauthorized: Count };

/** Usage over a span as the admin API shows it: instants in ISO 8601. */
const SPAN = {
  step: v.picklist(USAGE_STEPS),
  /** The first bucket's start. */
  from: Iso,
  /** The span's end (now, at the latest). */
  to: Iso,
  totals: v.object(COUNTS),
  /** Every bucket from `from` to `to`, oldest first; `at` is its start. */
  buckets: v.array(v.object({ at: Iso, ...COUNTS })),
};

/** A key's usage as the admin API and `petstore keys usage --json` show it: instants in ISO 8601. */
export const KeyUsageViewSchema = v.object({ keyId: v.string(), ...SPAN });
export type KeyUsageView = v.InferOutput<typeof KeyUsageViewSchema>;

/** An account's usage: its keys' (every outcome) summed, as a key's is shown. */
export const AccountUsageViewSchema = v.object({
  accountId: v.string(),
  /** The keys summed: every key of the account, revoked ones too. */
  keyIds: v.array(v.string()),
  ...SPAN,
});
export type AccountUsageView = v.InferOutput<typeof AccountUsageViewSchema>;

/** The keys that used the most, as the admin API shows them. */
export const TopKeysViewSchema = v.object({
  window: v.picklist(USAGE_WINDOWS),
  by: v.picklist(["requests", "refusals"]),
  from: Iso,
  to: Iso,
  keys: v.array(
    v.object({ keyId: v.string(), label: v.nullable(v.string()), requests: Count, refusals: Count, ...COUNTS }),
  ),
});
export type TopKeysView = v.InferOutput<typeof TopKeysViewSchema>;

/**
 * A key's usage as an operator reads it (the admin API's `GET /keys/{id}/usage`,
 * `petstore keys usage --json`): the history with its instants in ISO 8601.
 * @example const view = usageView(await readKeyUsage(keys, "key_abc", { step: "day" }));
 */
export function usageView(history: KeyUsageHistory): KeyUsageView {
  return { keyId: history.keyId, ...spanView(history) };
}

/** An account's usage: its keys' summed (`readKeysUsage`), with their ids. */
export function accountUsageView(accountId: string, keyIds: string[], history: UsageHistory): AccountUsageView {
  return { accountId, keyIds, ...spanView(history) };
}

function spanView(history: UsageHistory) {
  return {
    step: history.step,
    from: iso(history.from)!,
    to: iso(history.to)!,
    totals: history.totals,
    buckets: history.buckets.map(({ at, ...counts }) => ({ at: iso(at)!, ...counts })),
  };
}

/**
 * Usage (a key's, an account's) as CSV lines, a header first: `at,admitted,rate_limited,banned,unauthorized`,
 * then a line per bucket, `at` in ISO 8601. The caller joins them (CRLF over HTTP, as RFC 4180 says).
 */
export function usageCsvLines(history: UsageHistory): string[] {
  return [
    "at,admitted,rate_limited,banned,unauthorized",
    ...history.buckets.map(
      (bucket) => `${iso(bucket.at)},${bucket.admitted},${bucket.rateLimited},${bucket.banned},${bucket.unauthorized}`,
    ),
  ];
}

/** The top keys with their instants in ISO 8601 and each key's label (null without one). */
export function topKeysView(top: TopKeys, labels: ReadonlyMap<string, string | undefined>): TopKeysView {
  return {
    window: top.window,
    by: top.by,
    from: iso(top.from)!,
    to: iso(top.to)!,
    keys: top.keys.map((total) => ({ ...total, label: labels.get(total.keyId) ?? null })),
  };
}
