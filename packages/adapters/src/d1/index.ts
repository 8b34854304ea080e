import type { Adapters, ApiKeys, IdempotencyStore, PetStore, RateLimiter } from "@petstore/core";
import { libsqlConnection } from "../libsql/_source.js";
import { libsqlIdempotency } from "../libsql/idempotency.js";
import { libsqlKeys } from "../libsql/keys.js";
import { libsqlLimiter } from "../libsql/limiter.js";
import { migrateLibsql } from "../libsql/migrations.js";
import { libsqlStore } from "../libsql/store.js";
import type { StoreClockOptions } from "../_sql/store-clock.js";
import { type D1Database, d1Engine } from "./_engine.js";

// D1 is SQLite: these are the libSQL adapters, their statements and migrations, run on an
// engine over the binding. No `node:` import and no native code: this entry loads in Workers.
export type { D1Database } from "./_engine.js";
export type { StoreClockOptions } from "../_sql/store-clock.js";

/** The libSQL adapters' view of a D1 binding: a connection on the D1 engine (nothing to close). */
const onD1 = (db: D1Database) => libsqlConnection(d1Engine(db), () => {});

/**
 * Applies pending migrations (the libSQL adapters' schema), each in one D1 batch together
 * with its row in `schema_migrations`. Safe when several isolates start at once.
 * @example await migrateD1(env.DB);
 */
export const migrateD1 = (db: D1Database): Promise<void> => migrateLibsql(onD1(db));

/** Pets and orders in D1 (run `migrateD1` first); a create with an idempotency claim completes it in the insert's batch. */
export const d1Store = (db: D1Database): PetStore => libsqlStore(onD1(db));

/** API key records and their audit trail in D1 (run `migrateD1` first), shared by every isolate. */
export const d1Keys = (db: D1Database, options: StoreClockOptions = {}): ApiKeys => libsqlKeys(onD1(db), options);

/** Idempotency records in D1 (run `migrateD1` first): a claim is one atomic upsert; records age by D1's clock. */
export const d1Idempotency = (db: D1Database, options: StoreClockOptions = {}): IdempotencyStore =>
  libsqlIdempotency(onD1(db), options);

/**
 * Fixed-window counters in D1 (run `migrateD1` first), each decision one atomic statement:
 * exact across isolates, at one D1 round trip per request, by D1's clock. For deployments
 * without Durable Objects; with them, `durableObjectLimiter` of `@petstore/adapters/durable-objects`.
 */
export const d1Limiter = (db: D1Database, options: StoreClockOptions = {}): RateLimiter =>
  libsqlLimiter(onD1(db), options);

/**
 * All four on one D1 database, wired: spread into createPetstore. Every isolate shares them;
 * windows, bans and records' ages follow D1's clock (`options.clock`'s in tests).
 * @example
 * await migrateD1(env.DB); // once, e.g. on the first request
 * const petstore = createPetstore({ ...d1Adapters(env.DB) });
 */
export function d1Adapters(db: D1Database, options: StoreClockOptions = {}): Adapters {
  const source = onD1(db);
  return {
    store: libsqlStore(source),
    keys: libsqlKeys(source, options),
    limiter: libsqlLimiter(source, options),
    idempotency: libsqlIdempotency(source, options),
  };
}
