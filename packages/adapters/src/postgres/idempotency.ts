import type { IdempotencyStore } from "@petstore/core";
import { sqlIdempotency } from "../_sql/idempotency.js";
import { idempotencyStatements } from "../_sql/idempotency-sql.js";
import { POSTGRES_NOW, type StoreClockOptions } from "../_sql/store-clock.js";
import type { PostgresSource } from "./_client.js";
import { engineOf } from "./_engine.js";

/** Bound by number with their types: the claim's names are text, `:batch` an integer, the rest bigints. */
const TYPES: Record<string, string> = { scope: "text", key: "text", fingerprint: "text", batch: "integer" };

const STATEMENTS = idempotencyStatements({
  placeholder: (position, name) => `$${position}::${TYPES[name] ?? "bigint"}`,
  now: POSTGRES_NOW,
});

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
