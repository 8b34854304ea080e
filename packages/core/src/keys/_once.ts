import { bodyFingerprint } from "../_idempotency-key.js";
import { sha256Hex } from "../_sha256.js";
import type { Actor, IdempotencyClaim, IdempotencyStore } from "../ports.js";
import { base62OfHex } from "./api-key.js";

/** An Idempotency-Key that cannot be answered now: its first request still runs, or it came with another request. */
export type IdempotencyRefusal = { state: "idempotency_key_in_use" } | { state: "idempotency_key_reused" };

/**
 * Runs `change` under an Idempotency-Key (`key`, claimed in `scope` of the `IdempotencyStore`):
 * once; asked again with the same key and the same `asked`, `replay` answers instead; with
 * another, `idempotency_key_reused`. The claim is completed after the change (an outcome
 * `created` or `changed`), not with it: a crash between the two leaves the claim to its lease
 * (60 s), after which a retry makes the change anew, or finds what its first attempt made.
 * Without a key, `change` runs as it is.
 */
export async function once<T extends { state: string }, R>(
  idempotency: IdempotencyStore | undefined,
  claimed: { scope: string; key: string | undefined; asked: unknown },
  change: () => Promise<T>,
  replay: () => Promise<R>,
): Promise<T | R | IdempotencyRefusal> {
  if (claimed.key === undefined) return change();
  if (!idempotency) throw new TypeError("An Idempotency-Key needs an IdempotencyStore: give the `idempotency` option");
  const claim: IdempotencyClaim = {
    scope: claimed.scope,
    key: claimed.key,
    fingerprint: await bodyFingerprint(claimed.asked),
  };
  const found = await idempotency.claim(claim);
  if (found.state === "in_progress") return { state: "idempotency_key_in_use" };
  if (found.state === "mismatch") return { state: "idempotency_key_reused" };
  if (found.state !== "claimed") return replay();
  let outcome: T;
  try {
    outcome = await change();
  } catch (error) {
    await idempotency.release(claim).catch(() => {});
    throw error;
  }
  // A change made is answered even when its completion fails: a retry then waits out the claim's lease.
  if (outcome.state === "created" || outcome.state === "changed") await idempotency.complete(claim).catch(() => {});
  else await idempotency.release(claim).catch(() => {});
  return outcome;
}

/**
 * The id (`prefix` and 16 base62 characters) of what a create under an Idempotency-Key makes:
 * derived from its actor and that key, so that a retry after a crash finds what its first
 * attempt made (a duplicate, to the store).
 */
export async function requestedId(prefix: string, actor: Actor, idempotencyKey: string): Promise<string> {
  return `${prefix}${base62OfHex(await sha256Hex(`${actor.who}\u0000${idempotencyKey}`), 16)}`;
}
