import type { Identity } from "./identify.js";

/**
 * Stage 4b, lapse: a caller whose key expired, or who sent the secret its key had before a
 * roll whose overlap ended, is refused from that instant on, at the limiter's instant `now`
 * (its store's clock, as every server has it), even while the key cache still holds the key.
 * Its requests counted in the key's bucket: the key is known, and its owner's.
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
