import { keyBucket } from "../keys/bucket.js";
import { keyRecordIs } from "../keys/key-states.js";
import { SCOPES } from "../keys/rules.js";
import { DEFAULT_PLANS, limitsResolver, type PlanLimits } from "../plans.js";
import type { ApiKeyRecord, PlanName, RateLimiter } from "../ports.js";
import type { KeyState, KeyView } from "./schemas.js";

/** Where a key's view reads what the record does not hold. */
export interface KeyViewSource {
  /** The limiter the servers count the key in: its usage and ban come from `peek` (none without it). */
  limiter?: Pick<RateLimiter, "peek">;
  /** The plans' numbers, as given to `createPetstore`. Default `DEFAULT_PLANS`. */
  plans?: Partial<Record<PlanName, PlanLimits>>;
  /** Unix ms: whether a roll's overlap still runs, when the limiter cannot say its instant. Default `Date.now`. */
  clock?: () => number;
}

/** An instant as the admin API shows it: ISO 8601, or null for none. */
export const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/**
 * A key as an operator sees it (the admin API's `KeyView`, `petstore keys show --json`): its
 * plan and limits, dates, scopes and allowed ranges, every state it is in, the overlap of a roll while it runs, and this minute's and today's
 * usage and ban as the limiter holds them (`usage: null` when the limiter cannot say).
 * Never its secret nor its hash.
 * @example const view = await keyView(await keys.get("key_abc"), { limiter });
 */
export async function keyView(record: ApiKeyRecord, source: KeyViewSource = {}): Promise<KeyView> {
  const { windows } = limitsResolver({ ...DEFAULT_PLANS, ...source.plans })(record);
  const state = source.limiter?.peek
    ? await source.limiter.peek({
        bucket: keyBucket(record.id, record.accountId),
        windows,
        ban: { threshold: 0, seconds: 0 },
      })
    : undefined;
  const usage = state && {
    minute: {
      used: windows[0]!.limit - state.windows[0]!.remaining,
      limit: windows[0]!.limit,
      resetAt: iso(state.windows[0]!.resetAt)!,
    },
    day: {
      used: windows[1]!.limit - state.windows[1]!.remaining,
      limit: windows[1]!.limit,
      resetAt: iso(state.windows[1]!.resetAt)!,
    },
    bannedUntil: iso(state.bannedUntil),
  };
  const now = state?.now ?? (source.clock ?? Date.now)();
  // A revoked key's old secret works no more than its current one.
  const rolling =
    record.rolled && keyRecordIs(record, "rolling", now)
      ? { since: iso(record.rolled.at)!, until: iso(record.rolled.until)! }
      : null;
  // By the same rule as the key stores' lists by state, but for a ban, which is the limiter's.
  const states: KeyState[] = [];
  if (keyRecordIs(record, "live", now)) states.push("active");
  if (rolling) states.push("rolling");
  if (state?.bannedUntil !== undefined) states.push("banned");
  if (keyRecordIs(record, "expired", now)) states.push("expired");
  if (keyRecordIs(record, "revoked", now)) states.push("revoked");
  return {
    id: record.id,
    accountId: record.accountId,
    plan: record.plan,
    perMinute: windows[0]!.limit,
    perDay: windows[1]!.limit,
    label: record.label ?? null,
    createdAt: iso(record.createdAt)!,
    expiresAt: iso(record.expiresAt),
    revokedAt: iso(record.revokedAt),
    lastUsedAt: iso(record.lastUsedAt),
    scopes: record.scopes ?? [...SCOPES],
    allowFrom: record.allowFrom ?? null,
    rolling,
    usage: usage ?? null,
    states,
  };
}
