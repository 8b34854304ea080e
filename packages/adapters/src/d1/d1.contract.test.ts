import {
  apiKeysContract,
  idempotencyContract,
  keyUsageContract,
  petStoreContract,
  rateLimiterContract,
} from "@petstore/core/testing";
import { useWorkerdBindings } from "../../../../test/_support/workerd.js";
import { d1Idempotency, d1Keys, d1Limiter, d1Store } from "./index.js";

// The contract suites against real D1 databases in workerd (miniflare), through its binding
// proxy: a fresh migrated database per test.
// One D1 database per test of the five contracts here.
const workerd = useWorkerdBindings(160);

const storeFixture = async (clock: (() => number) | undefined) => {
  const db = await workerd.database();
  return { store: d1Store(db), idempotency: d1Idempotency(db, { clock }) };
};

petStoreContract("d1", storeFixture);
idempotencyContract("d1", storeFixture);
// Every hit is a round trip through the binding proxy: fewer random sequences than in-process stores.
rateLimiterContract("d1", async (clock) => ({ limiter: d1Limiter(await workerd.database(), { clock }) }), { runs: 10 });
apiKeysContract("d1", async (clock) => ({ keys: d1Keys(await workerd.database(), { clock }) }));
keyUsageContract("d1", async (clock) => ({ keys: d1Keys(await workerd.database(), { clock }) }));
