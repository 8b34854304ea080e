import { storeContracts } from "@petstore/core/testing";
import type { LibsqlSource } from "./_source.js";
import { tempDatabase } from "../../../../test/_support/libsql-database.js";
import {
  libsqlAdminTokens,
  libsqlIdempotency,
  libsqlKeys,
  libsqlLimiter,
  libsqlStore,
  migrateLibsql,
} from "./index.js";
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
    await migrateLibsql(db);
    return { db, close: async () => db.close() };
  },
};

for (const [kind, open] of Object.entries(databases)) {
  const fixture =
    <T extends object>(adapters: (source: LibsqlSource, clock: (() => number) | undefined) => T) =>
    async (clock?: () => number) => {
      const database = await open();
      return { ...adapters(database.db, clock), close: database.close };
    };
  storeContracts(`libsql ${kind}`, {
    store: fixture((db, clock) => ({ store: libsqlStore(db), idempotency: libsqlIdempotency(db, { clock }) })),
    limiter: fixture((db, clock) => ({ limiter: libsqlLimiter(db, { clock }) })),
    keys: fixture((db, clock) => ({ keys: libsqlKeys(db, { clock }) })),
    adminTokens: fixture((db, clock) => ({ tokens: libsqlAdminTokens(db, { clock }) })),
  });
}
