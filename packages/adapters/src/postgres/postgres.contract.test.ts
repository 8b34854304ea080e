import { storeContracts } from "@petstore/core/testing";
import { describe } from "vitest";
import { type Isolation, usePostgresDatabase } from "../../../../test/_support/postgres-database.js";
import {
  postgresAdminTokens,
  postgresIdempotency,
  postgresKeys,
  postgresLimiter,
  postgresStore,
  type PostgresSource,
} from "./index.js";

// A real PostgreSQL server (started by the run's globalSetup); a fresh migrated schema per test.
// Under each default isolation an operator may give the database (under
// serializable, 272 of 300 burst requests were answered 503).
describe.each<Isolation>(["read committed", "repeatable read", "serializable"])(
  "on a database whose default isolation is %s",
  (isolation) => {
    const database = usePostgresDatabase({ isolation });

    const fixture =
      <T extends object>(adapters: (source: PostgresSource, clock: (() => number) | undefined) => T) =>
      async (clock?: () => number) => {
        const { source, close } = await database.fresh();
        return { ...adapters(source, clock), close };
      };
    storeContracts(
      "postgres",
      {
        store: fixture((source, clock) => ({
          store: postgresStore(source),
          idempotency: postgresIdempotency(source, { clock }),
        })),
        limiter: fixture((source, clock) => ({ limiter: postgresLimiter(source, { clock }) })),
        keys: fixture((source, clock) => ({ keys: postgresKeys(source, { clock }) })),
        adminTokens: fixture((source, clock) => ({ tokens: postgresAdminTokens(source, { clock }) })),
      },
      // 30 random sequences of hits per property and isolation: 2 to 4 s each.
      { limiter: { runs: 30 } },
    );
  },
);
