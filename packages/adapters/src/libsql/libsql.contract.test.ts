import { apiKeysContract, idempotencyContract, petStoreContract, rateLimiterContract } from "@petstore/core/testing";
import type { LibsqlSource } from "./_source.js";
import { tempDatabase } from "../../../../test/_support/libsql-database.js";
import { libsqlIdempotency, libsqlKeys, libsqlLimiter, libsqlStore, migrate } from "./index.js";
import { connectLibsql } from "./local/connect-libsql.js";

/**
 * A fresh migrated database per test: a file in its own temporary directory (through
 * `connectLibsql`'s local fast path, or a plain client as a remote URL gets), or `:memory:`.
 */
const databases = {
  file: () => tempDatabase(),
  "plain client": () => tempDatabase({ plain: true }),
  memory: async () => {
    const db = await connectLibsql({ url: ":memory:" });
    await migrate(db);
    return { db, close: async () => db.close() };
  },
};

for (const [kind, open] of Object.entries(databases)) {
  const fixture = <T extends object>(adapters: (source: LibsqlSource) => T) => async () => {
    const database = await open();
    return { ...adapters(database.db), close: database.close };
  };
  const storeFixture = fixture((db) => ({ store: libsqlStore(db), idempotency: libsqlIdempotency(db) }));

  petStoreContract(`libsql ${kind}`, storeFixture);
  idempotencyContract(`libsql ${kind}`, storeFixture);
  rateLimiterContract(`libsql ${kind}`, fixture((db) => ({ limiter: libsqlLimiter(db) })));
  apiKeysContract(`libsql ${kind}`, fixture((db) => ({ keys: libsqlKeys(db) })));
}
