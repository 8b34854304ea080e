import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, type IdempotencyStore } from "@petstore/core";
import { DONE_WITHOUT_PET, type IdempotencyStatements, sqlIdempotency } from "../_sql/idempotency.js";
import { POSTGRES_NOW, type StoreClockOptions } from "../_sql/store-clock.js";
import type { PostgresSource } from "./_client.js";
import { engineOf } from "./_engine.js";

/** The instant a statement reckons ages at: $1, else the server's clock. */
const NOW = `coalesce($1::bigint, ${POSTGRES_NOW})`;

/** A record (columns prefixed `record`) is dead once finished for the TTL, or left unfinished past the lease ($2 lease, $3 TTL). */
const dead = (record: string) =>
  `${record}.claimed_at <= ${NOW} - CASE WHEN ${record}.pet_id IS NULL THEN $2::bigint ELSE $3::bigint END`;

const STATEMENTS: IdempotencyStatements = {
  take: ({ scope, key, fingerprint }, now) => ({
    // RETURNING yields a row only when this statement inserted the record or took over a dead
    // one; the conflicting row is locked and read at its latest (READ COMMITTED).
    sql: `INSERT INTO idempotency_keys AS k (scope, key, fingerprint, claimed_at, pet_id) VALUES ($4::text, $5::text, $6::text, ${NOW}, NULL)
          ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, claimed_at = excluded.claimed_at, pet_id = NULL
          WHERE ${dead("k")}
          RETURNING 1`,
    args: [now, IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, scope, key, fingerprint],
    oneRow: true,
  }),
  sweep: (now, batch) => ({
    sql: `DELETE FROM idempotency_keys WHERE (scope, key) IN (SELECT scope, key FROM idempotency_keys AS d WHERE ${dead("d")} LIMIT $4::integer)`,
    args: [now, IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, batch],
  }),
  find: ({ scope, key }) => ({
    sql: "SELECT fingerprint, pet_id FROM idempotency_keys WHERE scope = $1::text AND key = $2::text",
    args: [scope, key],
    oneRow: true,
  }),
  release: ({ scope, key, fingerprint }) => ({
    sql: "DELETE FROM idempotency_keys WHERE scope = $1::text AND key = $2::text AND fingerprint = $3::text AND pet_id IS NULL",
    args: [scope, key, fingerprint],
  }),
  complete: ({ scope, key, fingerprint }) => ({
    sql: "UPDATE idempotency_keys SET pet_id = $4::bigint WHERE scope = $1::text AND key = $2::text AND fingerprint = $3::text AND pet_id IS NULL",
    args: [scope, key, fingerprint, DONE_WITHOUT_PET],
  }),
};

/**
 * Idempotency records in Postgres (run `migratePostgres` first), shared by every process on
 * it. `claim` is one upsert that takes the key only when no live record holds it, so of
 * concurrent claims from any number of processes exactly one wins; `postgresStore` completes
 * the claim in its insert. Records age by the PostgreSQL server's clock (`options.clock`'s in tests).
 * @example const idempotency = postgresIdempotency({ sql });
 */
export function postgresIdempotency(source: PostgresSource, options: StoreClockOptions = {}): IdempotencyStore {
  return sqlIdempotency(engineOf(source), STATEMENTS, options.clock);
}
