import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, type IdempotencyStore } from "@petstore/core";
import { DONE_WITHOUT_PET, type IdempotencyStatements, sqlIdempotency } from "../_sql/idempotency.js";
import { SQLITE_NOW, type StoreClockOptions } from "../_sql/store-clock.js";
import { engineOf, type LibsqlSource } from "./_source.js";

/** The instant a statement reckons ages at: `:now`, else the database's clock. */
const NOW = `coalesce(:now, ${SQLITE_NOW})`;

/** A record is dead once finished for the TTL, or left unfinished past the lease. */
const DEAD = `claimed_at <= ${NOW} - CASE WHEN pet_id IS NULL THEN :lease ELSE :ttl END`;
const AGES = { lease: IDEMPOTENCY_LEASE_MS, ttl: IDEMPOTENCY_TTL_MS };

const STATEMENTS: IdempotencyStatements = {
  take: ({ scope, key, fingerprint }, now) => ({
    // RETURNING yields a row only when this statement inserted the record or took over a dead one.
    sql: `INSERT INTO idempotency_keys (scope, key, fingerprint, claimed_at, pet_id) VALUES (:scope, :key, :fingerprint, ${NOW}, NULL)
          ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, claimed_at = excluded.claimed_at, pet_id = NULL
          WHERE ${DEAD}
          RETURNING 1`,
    args: { scope, key, fingerprint, now, ...AGES },
    oneRow: true,
  }),
  sweep: (now, batch) => ({
    sql: `DELETE FROM idempotency_keys WHERE (scope, key) IN (SELECT scope, key FROM idempotency_keys WHERE ${DEAD} LIMIT :batch)`,
    args: { now, ...AGES, batch },
  }),
  find: ({ scope, key }) => ({
    sql: "SELECT fingerprint, pet_id FROM idempotency_keys WHERE scope = ? AND key = ?",
    args: [scope, key],
    oneRow: true,
  }),
  release: ({ scope, key, fingerprint }) => ({
    sql: "DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND fingerprint = ? AND pet_id IS NULL",
    args: [scope, key, fingerprint],
  }),
  complete: ({ scope, key, fingerprint }) => ({
    sql: "UPDATE idempotency_keys SET pet_id = ? WHERE scope = ? AND key = ? AND fingerprint = ? AND pet_id IS NULL",
    args: [DONE_WITHOUT_PET, scope, key, fingerprint],
  }),
};

/**
 * Idempotency records in a libSQL database (run `migrateLibsql` first), shared by every process on
 * it. `claim` is one upsert that takes the key only when no live record holds it, so of two
 * concurrent claims exactly one wins; `libsqlStore` completes the claim in its insert's
 * transaction. Records age by the database's clock (`options.clock`'s in tests).
 */
export function libsqlIdempotency(source: LibsqlSource, options: StoreClockOptions = {}): IdempotencyStore {
  return sqlIdempotency(engineOf(source), STATEMENTS, options.clock);
}
