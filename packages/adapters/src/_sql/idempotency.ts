import type { ClaimResult, IdempotencyClaim, IdempotencyStore } from "@petstore/core";
import type { SqlEngine, Statement } from "./engine.js";

/** Every this many claims, one claim also deletes a bounded number of dead records. */
const SWEEP_EVERY = 1_000;
const SWEEP_BATCH = 1_000;

/** An engine's SQL for the idempotency records (table `idempotency_keys`). */
export interface IdempotencyStatements {
  /**
   * ONE upsert that takes the key only when no live record holds it (none, or one finished
   * past the TTL or left unfinished past the lease), returning a row only when it took it.
   * Ages are reckoned at `now`, or at the store's clock when it is null.
   */
  take(claim: IdempotencyClaim, now: number | null): Statement;
  /** Deletes at most `batch` records dead at `now` (null: the store's clock). */
  sweep(now: number | null, batch: number): Statement;
  /** The record of the claim's scope and key: `fingerprint`, `pet_id`. */
  find(claim: IdempotencyClaim): Statement;
  /** Deletes the claim's record only while it is unfinished and has the claim's fingerprint. */
  release(claim: IdempotencyClaim): Statement;
  /** Marks the claim's record done without a pet (`pet_id` 0), only while it is unfinished and has the claim's fingerprint. */
  complete(claim: IdempotencyClaim): Statement;
}

/** `pet_id` of a record finished by an operation that stores no pet: pets' ids start at 1. */
export const DONE_WITHOUT_PET = 0;

/**
 * Idempotency records in a SQL database, shared by every process on it: of concurrent claims
 * of one key exactly one wins (`take` is one atomic statement); the store completes the claim
 * in its insert's transaction. Records age by the database's clock (by `clock`'s in tests), so
 * no server's clock can expire another's record early. Dead records are deleted by every
 * 1000th claim (no timers).
 */
export function sqlIdempotency(
  db: SqlEngine,
  statements: IdempotencyStatements,
  clock?: () => number,
): IdempotencyStore {
  let claims = 0;

  async function claim(claim: IdempotencyClaim): Promise<ClaimResult> {
    const now = clock ? clock() : null;
    const take = statements.take(claim, now);
    const sweeping = ++claims % SWEEP_EVERY === 0;
    for (;;) {
      const [taken] = await db.write(sweeping ? [take, statements.sweep(now, SWEEP_BATCH)] : [take]);
      if (taken!.rows.length > 0) return { state: "claimed" };
      const record = (await db.read(statements.find(claim))).rows[0];
      // Gone: released between the two statements, so it is free to take now.
      if (!record) continue;
      if (record.fingerprint !== claim.fingerprint) return { state: "mismatch" };
      if (record.pet_id === null) return { state: "in_progress" };
      const petId = Number(record.pet_id);
      return petId === DONE_WITHOUT_PET ? { state: "done" } : { state: "completed", petId };
    }
  }

  return {
    claim,
    async release(claim) {
      // Only this request's unfinished claim: a completed record must keep answering replays,
      // and a claim another request took over after the lease is not ours to drop.
      await db.write([statements.release(claim)]);
    },
    async complete(claim) {
      await db.write([statements.complete(claim)]);
    },
  };
}
