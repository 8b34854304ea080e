import type { AdminTokens, ApiKeys } from "@petstore/core";
import { sqlAdminTokens } from "../_sql/admin-tokens.js";
import { type KeysDialect, sqlKeys } from "../_sql/keys.js";
import { TALLY_COLUMNS } from "../_sql/usage.js";
import { SQLITE_NOW, type StoreClockOptions } from "../_sql/store-clock.js";
import { engineOf, type LibsqlSource } from "./_source.js";

/**
 * API key records and their audit trail in a libSQL database (run `migrateLibsql` first), shared by
 * every process on it; rolls and expiries by the database's clock (`options.clock`'s in tests).
 * Core caches verified keys for at most 5 s, so a change here reaches every process within that.
 */
export function libsqlKeys(source: LibsqlSource, options: StoreClockOptions = {}): ApiKeys {
  return sqlKeys(engineOf(source), SQLITE_DIALECT, options.clock);
}

/** SQLite's way with the key stores' statements (also D1's). */
const SQLITE_DIALECT: KeysDialect = {
  name: "sqlite",
  arg: (n) => `?${n}`,
  now: SQLITE_NOW,
  greatest: "max",
  // rowid order is insertion order, as with the memory adapter.
  order: "rowid",
  isDuplicate: (error) => String((error as { code?: unknown }).code).startsWith("SQLITE_CONSTRAINT"),
  tallies: (n) =>
    `(SELECT ${TALLY_COLUMNS.map((column, i) => `json_extract(value, '$[${i}]') AS ${column}`).join(
      ", ",
    )} FROM json_each(?${n})) AS tallies`,
};

/** Admin tokens in a libSQL database (run `migrateLibsql` first), shared by every server on it. */
export function libsqlAdminTokens(source: LibsqlSource, options: StoreClockOptions = {}): AdminTokens {
  return sqlAdminTokens(engineOf(source), SQLITE_DIALECT, options.clock);
}
