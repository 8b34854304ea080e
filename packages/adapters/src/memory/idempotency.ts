import { type ClaimResult, IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, type IdempotencyClaim, type IdempotencyStore } from "@petstore/core";

/** The memory idempotency store, plus the hook its `memoryStore` completes claims through. */
export interface MemoryIdempotency extends IdempotencyStore {
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
      const entry = entries.get(id(claim));
      if (entry && entry.petId === undefined) entries.delete(id(claim));
    },
    complete(claim, petId) {
      const entry = entries.get(id(claim));
      if (entry) entry.petId = petId;
    },
  };
}
