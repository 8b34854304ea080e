import type { IdempotencyStore } from "@petstore/core";
import { sqlIdempotency } from "../_sql/idempotency.js";
import { idempotencyStatements } from "../_sql/idempotency-sql.js";
import { SQLITE_NOW, type StoreClockOptions } from "../_sql/store-clock.js";
import { engineOf, type LibsqlSource } from "./_source.js";

const STATEMENTS = idempotencyStatements({ placeholder: (position) => `?${position}`, now: SQLITE_NOW });

/**
 * Idempotency records in a libSQL database (run `migrateLibsql` first), shared by every process on
 * it. `claim` is one upsert that takes the key only when no live record holds it, so of two
 * concurrent claims exactly one wins; `libsqlStore` completes the claim in its insert's
 * transaction. Records age by the database's clock (`options.clock`'s in tests).
 */
export function libsqlIdempotency(source: LibsqlSource, options: StoreClockOptions = {}): IdempotencyStore {
  return sqlIdempotency(engineOf(source), STATEMENTS, options.clock);
}
