import { type ClaimResult, IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, type IdempotencyClaim, type IdempotencyStore } from "@petstore/core";
import type { Statement } from "../_sql/engine.js";
import { engineOf, type LibsqlSource } from "./_source.js";

/** Every this many claims, one claim also deletes a bounded number of dead records. */
const SWEEP_EVERY = 1_000;
const SWEEP_BATCH = 1_000;

/** A record is dead once finished for the TTL, or left unfinished past the lease. */
const DEAD = "claimed_at <= :now - CASE WHEN pet_id IS NULL THEN :lease ELSE :ttl END";

/**
 * Idempotency records in a libSQL database (run `migrate` first), shared by every process on
 * it. `claim` is one upsert that takes the key only when no live record holds it, so of two
 * concurrent claims exactly one wins; `libsqlStore` completes the claim in its insert's
 * transaction.
 */
export function libsqlIdempotency(source: LibsqlSource): IdempotencyStore {
  const db = engineOf(source);
  let claims = 0;

  async function claim({ scope, key, fingerprint }: IdempotencyClaim, now: number): Promise<ClaimResult> {
    const args = { scope, key, fingerprint, now, lease: IDEMPOTENCY_LEASE_MS, ttl: IDEMPOTENCY_TTL_MS };
    const take: Statement = {
      // RETURNING yields a row only when this statement inserted the record or took over a dead one.
      sql: `INSERT INTO idempotency_keys (scope, key, fingerprint, claimed_at, pet_id) VALUES (:scope, :key, :fingerprint, :now, NULL)
            ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, claimed_at = excluded.claimed_at, pet_id = NULL
            WHERE ${DEAD}
            RETURNING 1`,
      args,
      oneRow: true,
    };
    const sweep: Statement = {
      sql: `DELETE FROM idempotency_keys WHERE (scope, key) IN (SELECT scope, key FROM idempotency_keys WHERE ${DEAD} LIMIT :batch)`,
      args: { now, lease: IDEMPOTENCY_LEASE_MS, ttl: IDEMPOTENCY_TTL_MS, batch: SWEEP_BATCH },
    };
    const sweeping = ++claims % SWEEP_EVERY === 0;
    for (;;) {
      const [taken] = await db.write(sweeping ? [take, sweep] : [take]);
      if (taken!.rows.length > 0) return { state: "claimed" };
      const { rows } = await db.execute({
        sql: "SELECT fingerprint, pet_id FROM idempotency_keys WHERE scope = ? AND key = ?",
        args: [scope, key],
        oneRow: true,
      });
      const record = rows[0];
      // Gone: released between the two statements, so it is free to take now.
      if (!record) continue;
      if (record.fingerprint !== fingerprint) return { state: "mismatch" };
      if (record.pet_id === null) return { state: "in_progress" };
      return { state: "completed", petId: Number(record.pet_id) };
    }
  }

  return {
    claim,
    async release({ scope, key, fingerprint }) {
      // Only this request's unfinished claim: a completed record must keep answering replays,
      // and a claim another request took over after the lease is not ours to drop.
      await db.write([
        { sql: "DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND fingerprint = ? AND pet_id IS NULL", args: [scope, key, fingerprint] },
      ]);
    },
  };
}
