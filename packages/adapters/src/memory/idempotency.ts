import {
  type ClaimResult,
  IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_TTL_MS,
  type IdempotencyClaim,
  type IdempotencyStore,
} from "@petstore/core";

interface Entry {
  fingerprint: string;
  claimedAt: number;
  /** Finished: by a pet's create (its id), or by an operation that stores none (`done`). */
  finished?: { petId: number } | "done";
}

const SWEEP_EVERY = 1024;

/**
 * The records of `memoryIdempotency`, and what `memoryStore` completes them through (`holds`,
 * `completeWithPet`): its type, private fields and all, is what `memoryStore` takes, so no other
 * idempotency store can be handed to it.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  readonly #clock: () => number;
  #claims = 0;

  constructor(clock: () => number) {
    this.#clock = clock;
  }

  async claim(claim: IdempotencyClaim): Promise<ClaimResult> {
    const now = this.#clock();
    if (++this.#claims % SWEEP_EVERY === 0) {
      for (const [key, entry] of this.#entries) if (!isLive(entry, now)) this.#entries.delete(key);
    }
    const entry = this.#entries.get(idOf(claim));
    if (!entry || !isLive(entry, now)) {
      this.#entries.set(idOf(claim), { fingerprint: claim.fingerprint, claimedAt: now });
      return { state: "claimed" };
    }
    if (entry.fingerprint !== claim.fingerprint) return { state: "mismatch" };
    if (entry.finished === undefined) return { state: "in_progress" };
    return entry.finished === "done" ? { state: "done" } : { state: "completed", petId: entry.finished.petId };
  }

  async release(claim: IdempotencyClaim): Promise<void> {
    // Only this request's unfinished claim: a completed record keeps answering replays, and
    // a claim another request took over after the lease is not ours to drop.
    if (this.holds(claim)) this.#entries.delete(idOf(claim));
  }

  /** The claim is still this request's: unfinished, with its body (not taken over after the lease). */
  holds(claim: IdempotencyClaim): boolean {
    const entry = this.#entries.get(idOf(claim));
    return entry !== undefined && entry.finished === undefined && entry.fingerprint === claim.fingerprint;
  }

  async complete(claim: IdempotencyClaim): Promise<void> {
    if (this.holds(claim)) this.#entries.get(idOf(claim))!.finished = "done";
  }

  /** Completes the claim with the pet a create under it stored: `memoryStore` calls it in the create. */
  completeWithPet(claim: IdempotencyClaim, petId: number): void {
    const entry = this.#entries.get(idOf(claim));
    if (entry) entry.finished = { petId };
  }
}

const idOf = (claim: IdempotencyClaim) => `${claim.scope}\u0000${claim.key}`;

const isLive = (entry: Entry, now: number) =>
  entry.finished !== undefined
    ? now - entry.claimedAt < IDEMPOTENCY_TTL_MS
    : now - entry.claimedAt < IDEMPOTENCY_LEASE_MS;

export interface MemoryIdempotencyOptions {
  /** Unix ms: the clock records age by (this process's). Default `Date.now`; tests move their own. */
  clock?: (() => number) | undefined;
}

/**
 * Idempotency records in a Map, dropped after 24 h by a sweep that runs every 1024 claims
 * (no timers). Hand it to a `memoryStore` (`memoryAdapters` does) so that creates complete its claims.
 */
export function memoryIdempotency(options: MemoryIdempotencyOptions = {}): MemoryIdempotencyStore {
  return new MemoryIdempotencyStore(options.clock ?? Date.now);
}
