import { apiKeysContract, idempotencyContract, petStoreContract, rateLimiterContract } from "@petstore/core/testing";
import { usePostgresDatabase } from "../../../../test/_support/postgres-database.js";
import { postgresIdempotency, postgresKeys, postgresLimiter, postgresStore, type PostgresSource } from "./index.js";

// A real PostgreSQL server (started by the run's globalSetup); a fresh migrated schema per test.
const database = usePostgresDatabase();

const fixture = <T extends object>(adapters: (source: PostgresSource) => T) => async () => {
  const { source, close } = await database.fresh();
  return { ...adapters(source), close };
};

petStoreContract("postgres", fixture((source) => ({ store: postgresStore(source), idempotency: postgresIdempotency(source) })));
idempotencyContract("postgres", fixture((source) => ({ store: postgresStore(source), idempotency: postgresIdempotency(source) })));
rateLimiterContract("postgres", fixture((source) => ({ limiter: postgresLimiter(source) })));
apiKeysContract("postgres", fixture((source) => ({ keys: postgresKeys(source) })));
