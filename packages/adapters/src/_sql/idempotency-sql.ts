import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS } from "@petstore/core";
import { boundByNumber, type Value } from "./engine.js";
import { DONE_WITHOUT_PET, type IdempotencyStatements } from "./idempotency.js";

/**
 * What a dialect writes of the idempotency statements: its store's clock in SQL (see
 * store-clock.ts) and how it writes a numbered parameter (`?1`, `$1::text`), as the limiter's.
 */
export interface IdempotencyDialect {
  placeholder(position: number, name: string): string;
  now: string;
}

/** The idempotency statements of a dialect, each written once with named parameters and bound by number. */
export function idempotencyStatements(dialect: IdempotencyDialect): IdempotencyStatements {
  const bound = (named: string, oneRow = false) =>
    boundByNumber<Record<string, Value>>(named, dialect.placeholder, oneRow);
  /** The instant a statement reckons ages at: `:now`, else the store's clock. */
  const now = `coalesce(:now, ${dialect.now})`;
  /** A record (its alias `record`) is dead once finished for the TTL, or left unfinished past the lease. */
  const dead = (record: string) =>
    `${record}.claimed_at <= ${now} - CASE WHEN ${record}.pet_id IS NULL THEN :lease ELSE :ttl END`;
  const ages = { lease: IDEMPOTENCY_LEASE_MS, ttl: IDEMPOTENCY_TTL_MS };
  // RETURNING yields a row only when this statement inserted the record or took over a dead
  // one; the conflicting row is locked and read at its latest (under PostgreSQL's READ COMMITTED).
  const take = bound(
    `INSERT INTO idempotency_keys AS k (scope, key, fingerprint, claimed_at, pet_id) VALUES (:scope, :key, :fingerprint, ${now}, NULL)
ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, claimed_at = excluded.claimed_at, pet_id = NULL
WHERE ${dead("k")}
RETURNING 1`,
    true,
  );
  const sweep = bound(
    `DELETE FROM idempotency_keys WHERE (scope, key) IN (SELECT scope, key FROM idempotency_keys AS d WHERE ${dead("d")} LIMIT :batch)`,
  );
  const find = bound("SELECT fingerprint, pet_id FROM idempotency_keys WHERE scope = :scope AND key = :key", true);
  const release = bound(
    "DELETE FROM idempotency_keys WHERE scope = :scope AND key = :key AND fingerprint = :fingerprint AND pet_id IS NULL",
  );
  const complete = bound(
    "UPDATE idempotency_keys SET pet_id = :pet WHERE scope = :scope AND key = :key AND fingerprint = :fingerprint AND pet_id IS NULL",
  );
  return {
    take: ({ scope, key, fingerprint }, at) => take({ scope, key, fingerprint, now: at, ...ages }),
    sweep: (at, batch) => sweep({ now: at, ...ages, batch }),
    find: ({ scope, key }) => find({ scope, key }),
    release: ({ scope, key, fingerprint }) => release({ scope, key, fingerprint }),
    complete: ({ scope, key, fingerprint }) => complete({ scope, key, fingerprint, pet: DONE_WITHOUT_PET }),
  };
}
