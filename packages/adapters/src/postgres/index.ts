import type { Adapters } from "@petstore/core";
import type { StoreClockOptions } from "../_sql/store-clock.js";
import type { PostgresSource } from "./_client.js";
import { postgresIdempotency } from "./idempotency.js";
import { postgresKeys } from "./keys.js";
import { postgresLimiter } from "./limiter.js";
import { postgresStore } from "./store.js";

// No client is loaded here: the caller's postgres.js `sql` or Bun's `Bun.sql` is handed in.
export type { PostgresClient, PostgresQueries, PostgresSource } from "./_client.js";
export type { StoreClockOptions } from "../_sql/store-clock.js";
export { checkPostgres } from "./check-postgres.js";
export { postgresIdempotency } from "./idempotency.js";
export { postgresAdminTokens, postgresKeys } from "./keys.js";
export { postgresLimiter } from "./limiter.js";
export { migratePostgres } from "./migrations.js";
export { postgresStore } from "./store.js";

/**
 * All four on one Postgres database, sharing one bound on waiting queries: spread into
 * createPetstore. The store completes the claims of the idempotency store through the shared
 * tables, so processes on one database agree. Windows, bans and records' ages follow the
 * PostgreSQL server's clock (`options.clock`'s in tests), whatever the clocks of its clients.
 * @example
 * import postgres from "postgres"; // or: const sql = Bun.sql;
 * const sql = postgres(process.env.DATABASE_URL!, { max: 10 });
 * await migratePostgres({ sql });
 * const petstore = createPetstore({ ...postgresAdapters({ sql }) });
 */
export function postgresAdapters(source: PostgresSource, options: StoreClockOptions = {}): Adapters {
  return {
    store: postgresStore(source),
    keys: postgresKeys(source, options),
    limiter: postgresLimiter(source, options),
    idempotency: postgresIdempotency(source, options),
  };
}
