import type { Client } from "@libsql/client";
import type { ApiKeys, IdempotencyStore, PetStore, RateLimiter } from "@petstore/core";
import { libsqlIdempotency } from "./idempotency.js";
import { libsqlKeys } from "./keys.js";
import { libsqlLimiter } from "./limiter.js";
import { libsqlStore } from "./store.js";

export { checkLibsql } from "./check-libsql.js";
export type { StorageObserver } from "./_local-database.js";
export { connectLibsql } from "./connect-libsql.js";
export { libsqlIdempotency } from "./idempotency.js";
export { libsqlKeys } from "./keys.js";
export { libsqlLimiter } from "./limiter.js";
export { migrate } from "./migrations.js";
export { libsqlStore } from "./store.js";

/**
 * All four on one client, wired: spread into createPetstore. The store completes the claims of
 * the idempotency store through the shared tables, so any two of them on one database agree.
 * @example
 * const client = await connectLibsql({ url: "file:petstore.db" });
 * await migrate(client);
 * const petstore = createPetstore({ ...libsqlAdapters({ client }) });
 */
export function libsqlAdapters(options: { client: Client }): {
  store: PetStore;
  keys: ApiKeys;
  limiter: RateLimiter;
  idempotency: IdempotencyStore;
} {
  return {
    store: libsqlStore(options),
    keys: libsqlKeys(options),
    limiter: libsqlLimiter(options),
    idempotency: libsqlIdempotency(options),
  };
}
