import { type ClaimResult, IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, type IdempotencyClaim, type IdempotencyStore } from "@petstore/core";
import type { Statement } from "../_sql/engine.js";
import type { PostgresSource } from "./_client.js";
import { engineOf } from "./_engine.js";

/** Every this many claims, one claim also deletes a bounded number of dead records. */
const SWEEP_EVERY = 1_000;
const SWEEP_BATCH = 1_000;

/** A record (columns prefixed `record`) is dead once finished for the TTL, or left unfinished past the lease ($1 now, $2 lease, $3 TTL). */
const dead = (record: string) => `${record}.claimed_at <= $1::bigint - CASE WHEN ${record}.pet_id IS NULL THEN $2::bigint ELSE $3::bigint END`;

/**
 * Idempotency records in Postgres (run `migratePostgres` first), shared by every process on
 * it. `claim` is one upsert that takes the key only when no live record holds it (the
 * conflicting row is locked and read at its latest), so of concurrent claims from any number
 * of processes exactly one wins; `postgresStore` completes the claim in its insert.
 * @example const idempotency = postgresIdempotency({ sql });
 */
export function postgresIdempotency(source: PostgresSource): IdempotencyStore {
  const db = engineOf(source);
  let claims = 0;

  async function claim({ scope, key, fingerprint }: IdempotencyClaim, now: number): Promise<ClaimResult> {
    const take: Statement = {
      // RETURNING yields a row only when this statement inserted the record or took over a dead one.
      sql: `INSERT INTO idempotency_keys AS k (scope, key, fingerprint, claimed_at, pet_id) VALUES ($4::text, $5::text, $6::text, $1::bigint, NULL)
            ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, claimed_at = excluded.claimed_at, pet_id = NULL
            WHERE ${dead("k")}
            RETURNING 1`,
      args: [now, IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, scope, key, fingerprint],
      oneRow: true,
    };
    if (++claims % SWEEP_EVERY === 0) {
      await db.write([
        {
          sql: `DELETE FROM idempotency_keys WHERE (scope, key) IN (SELECT scope, key FROM idempotency_keys AS d WHERE ${dead("d")} LIMIT $4::integer)`,
          args: [now, IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, SWEEP_BATCH],
        },
      ]);
    }
    for (;;) {
      const [taken] = await db.write([take]);
      if (taken!.rows.length > 0) return { state: "claimed" };
      const { rows } = await db.execute({
        sql: "SELECT fingerprint, pet_id FROM idempotency_keys WHERE scope = $1::text AND key = $2::text",
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
        {
          sql: "DELETE FROM idempotency_keys WHERE scope = $1::text AND key = $2::text AND fingerprint = $3::text AND pet_id IS NULL",
          args: [scope, key, fingerprint],
        },
      ]);
    },
  };
}
