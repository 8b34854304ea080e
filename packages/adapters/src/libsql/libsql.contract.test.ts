import type { Client } from "@libsql/client";
import { apiKeysContract, idempotencyContract, petStoreContract, rateLimiterContract } from "@petstore/core/testing";
import { tempDatabase } from "./_temp-database.js";
import { connectLibsql, libsqlIdempotency, libsqlKeys, libsqlLimiter, libsqlStore, migrate } from "./index.js";

/**
 * A fresh migrated database per test: a file in its own temporary directory (through
 * `connectLibsql`'s local fast path, or a plain client as a remote URL gets), or `:memory:`.
 */
const databases = {
  file: () => tempDatabase(),
  "plain client": () => tempDatabase({ plain: true }),
  memory: async () => {
    const client = await connectLibsql({ url: ":memory:" });
    await migrate(client);
    return { client, close: async () => client.close() };
  },
};

for (const [kind, open] of Object.entries(databases)) {
  const fixture = <T extends object>(adapters: (client: Client) => T) => async () => {
    const database = await open();
    return { ...adapters(database.client), close: database.close };
  };
  const storeFixture = fixture((client) => ({ store: libsqlStore({ client }), idempotency: libsqlIdempotency({ client }) }));

  petStoreContract(`libsql ${kind}`, storeFixture);
  idempotencyContract(`libsql ${kind}`, storeFixture);
  rateLimiterContract(`libsql ${kind}`, fixture((client) => ({ limiter: libsqlLimiter({ client }) })));
  apiKeysContract(`libsql ${kind}`, fixture((client) => ({ keys: libsqlKeys({ client }) })));
}
