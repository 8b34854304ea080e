import type { Adapters } from "@petstore/core";
import type { StoreClockOptions } from "../_sql/store-clock.js";
import type { LibsqlSource } from "./_source.js";
import { libsqlIdempotency } from "./idempotency.js";
import { libsqlKeys } from "./keys.js";
import { libsqlLimiter } from "./limiter.js";
import { libsqlStore } from "./store.js";

// No native code and no `node:` import: this entry bundles for browsers and Workers-style
// platforms, with a `Client` of `@libsql/client/web`. `connectLibsql` (Node, Bun, Deno) is in
// `@petstore/adapters/libsql/connect`.
export type { LibsqlConnection, LibsqlSource } from "./_source.js";
export type { StoreClockOptions } from "../_sql/store-clock.js";
export { checkLibsql } from "./check-libsql.js";
export { libsqlIdempotency } from "./idempotency.js";
export { libsqlAdminTokens, libsqlKeys } from "./keys.js";
export { libsqlLimiter } from "./limiter.js";
export { migrateLibsql } from "./migrations.js";
export { libsqlStore } from "./store.js";

/**
 * All four on one database, wired: spread into createPetstore. The store completes the claims
 * of the idempotency store through the shared tables, so any two of them on one database agree.
 * Windows, bans and records' ages follow the database's clock (`options.clock`'s in tests).
 * @example
 * const db = await connectLibsql({ url: "file:petstore.db" }); // or { client } of any @libsql/client
 * await migrateLibsql(db);
 * const petstore = createPetstore({ ...libsqlAdapters(db) });
 */
export function libsqlAdapters(source: LibsqlSource, options: StoreClockOptions = {}): Adapters {
  return {
    store: libsqlStore(source),
    keys: libsqlKeys(source, options),
    limiter: libsqlLimiter(source, options),
    idempotency: libsqlIdempotency(source, options),
  };
}
