import { apiKeysContract, idempotencyContract, petStoreContract, rateLimiterContract } from "@petstore/core/testing";
import { useWorkerdBindings } from "../../../../test/_support/workerd.js";
import { d1Idempotency, d1Keys, d1Limiter, d1Store } from "./index.js";

// The contract suites against real D1 databases in workerd (miniflare), through its binding
// proxy: a fresh migrated database per test.
const workerd = useWorkerdBindings();

petStoreContract("d1", async () => {
  const db = await workerd.database();
  return { store: d1Store(db), idempotency: d1Idempotency(db) };
});
idempotencyContract("d1", async () => {
  const db = await workerd.database();
  return { store: d1Store(db), idempotency: d1Idempotency(db) };
});
rateLimiterContract("d1", async () => ({ limiter: d1Limiter(await workerd.database()) }));
apiKeysContract("d1", async () => ({ keys: d1Keys(await workerd.database()) }));
