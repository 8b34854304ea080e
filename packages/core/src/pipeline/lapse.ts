import type { Identity } from "./identify.js";

/**
 * Lapse: a caller whose key expired, or who sent the secret its key had before a
 * roll whose overlap ended, is refused from that instant on, at the limiter's instant `now`
 * (its store's clock, as every server has it), even while the key cache still holds the key.
 * Asked twice per request: before the hit at the limiter's instant as estimated (`Limit.instant`),
 * so that such a request counts against its client's address as any other unauthorized one
 * and never spends or bans the key or its account; then exactly at the hit's instant, which
 * decides the answer. Only where the estimate lags the store's clock (a step ahead of it, or a
 * server's skew before its first decision) does a request it refuses count in the key's buckets.
 */
export function lapse(identity: Identity, now: number): Identity {
  const { caller } = identity;
  if (!caller) return identity;
  const refused = (reason: "expired" | "rolled_out"): Identity => ({
    caller: undefined,
    sentKey: true,
    keyCache: identity.keyCache,
    refused: { keyId: caller.id, reason },
  });
  if (caller.expiresAt !== undefined && now >= caller.expiresAt) return refused("expired");
  if (identity.oldSecret && now >= caller.rolled!.until) return refused("rolled_out");
  return identity;
}
