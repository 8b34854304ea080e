import { type ClaimResult, IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, type IdempotencyClaim, type IdempotencyStore } from "@petstore/core";

/** The memory idempotency store, plus the hook its `memoryStore` completes claims through. */
export interface MemoryIdempotency extends IdempotencyStore {
  /** The claim is still this request's: unfinished, with its body (not taken over after the lease). */
  holds(claim: IdempotencyClaim): boolean;
  complete(claim: IdempotencyClaim, petId: number): void;
}

interface Entry {
  fingerprint: string;
  claimedAt: number;
  petId?: number;
}

const SWEEP_EVERY = 1024;

/**
 * Idempotency records in a Map, dropped after 24 h by a sweep that runs every 1024 claims
 * (no timers). Wire it to a `memoryStore` so that creates complete their claims.
 */
export function memoryIdempotency(): MemoryIdempotency {
  const entries = new Map<string, Entry>();
  const id = (claim: IdempotencyClaim) => `${claim.scope}\u0000${claim.key}`;
  let claims = 0;

  const isLive = (entry: Entry, now: number) =>
    entry.petId !== undefined ? now - entry.claimedAt < IDEMPOTENCY_TTL_MS : now - entry.claimedAt < IDEMPOTENCY_LEASE_MS;

  return {
    async claim(claim, now): Promise<ClaimResult> {
      if (++claims % SWEEP_EVERY === 0) {
        for (const [key, entry] of entries) if (!isLive(entry, now)) entries.delete(key);
      }
      const entry = entries.get(id(claim));
      if (!entry || !isLive(entry, now)) {
        entries.set(id(claim), { fingerprint: claim.fingerprint, claimedAt: now });
        return { state: "claimed" };
      }
      if (entry.fingerprint !== claim.fingerprint) return { state: "mismatch" };
      if (entry.petId === undefined) return { state: "in_progress" };
      return { state: "completed", petId: entry.petId };
    },
    async release(claim) {
      // Only this request's unfinished claim: a completed record keeps answering replays, and
      // a claim another request took over after the lease is not ours to drop.
      const entry = entries.get(id(claim));
      if (entry && entry.petId === undefined && entry.fingerprint === claim.fingerprint) entries.delete(id(claim));
    },
    holds(claim) {
      const entry = entries.get(id(claim));
      return entry !== undefined && entry.petId === undefined && entry.fingerprint === claim.fingerprint;
    },
    complete(claim, petId) {
      const entry = entries.get(id(claim));
      if (entry) entry.petId = petId;
    },
  };
}
