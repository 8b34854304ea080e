import type { AdminTokens, ApiKeys } from "@petstore/core";
import { sqlAdminTokens } from "../_sql/admin-tokens.js";
import { type KeysDialect, sqlKeys } from "../_sql/keys.js";
import { TALLY_COLUMNS } from "../_sql/usage.js";
import { POSTGRES_NOW, type StoreClockOptions } from "../_sql/store-clock.js";
import type { PostgresSource } from "./_client.js";
import { engineOf } from "./_engine.js";
import { sqlState } from "./_storage-errors.js";

/**
 * API key records and their audit trail in Postgres (run `migratePostgres` first), shared by
 * every process on it; rolls and expiries by the server's clock (`options.clock`'s in tests).
 * Core caches verified keys for at most 5 s, so a change here reaches every process within that.
 * @example const keys = postgresKeys({ sql });
 */
export function postgresKeys(source: PostgresSource, options: StoreClockOptions = {}): ApiKeys {
  return sqlKeys(engineOf(source), POSTGRES_DIALECT, options.clock);
}

/** PostgreSQL's way with the key stores' statements. */
const POSTGRES_DIALECT: KeysDialect = {
  name: "postgres",
  arg: (n, type) => `$${n}::${type}`,
  now: POSTGRES_NOW,
  greatest: "greatest",
  // `position`: insertion order (an identity column), as libSQL's rowid.
  order: "position",
  // unique_violation
  isDuplicate: (error) => sqlState(error) === "23505",
  tallies: (n) =>
    `(SELECT ${TALLY_COLUMNS.map((column, i) => (i === 0 ? `t->>0 AS ${column}` : `(t->>${i})::bigint AS ${column}`)).join(", ")} FROM json_array_elements($${n}::text::json) AS t) AS tallies`,
};

/** Admin tokens in Postgres (run `migratePostgres` first), shared by every server on it. */
export function postgresAdminTokens(source: PostgresSource, options: StoreClockOptions = {}): AdminTokens {
  return sqlAdminTokens(engineOf(source), POSTGRES_DIALECT, options.clock);
}
