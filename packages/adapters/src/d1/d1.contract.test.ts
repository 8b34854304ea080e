import { storeContracts } from "@petstore/core/testing";
import { useWorkerdBindings } from "../../../../test/_support/workerd.js";
import { d1Idempotency, d1Keys, d1Limiter, d1Store } from "./index.js";

// The contract suites against real D1 databases in workerd (miniflare), through its binding
// proxy: a fresh migrated database per test.
// One D1 database per test of the five contracts here.
const workerd = useWorkerdBindings(160);

// No admin tokens: the D1 adapters have no AdminTokens store.
storeContracts(
  "d1",
  {
    store: async (clock) => {
      const db = await workerd.database();
      return { store: d1Store(db), idempotency: d1Idempotency(db, { clock }) };
    },
    limiter: async (clock) => ({ limiter: d1Limiter(await workerd.database(), { clock }) }),
    keys: async (clock) => ({ keys: d1Keys(await workerd.database(), { clock }) }),
  },
  // Every hit is a round trip through the binding proxy: fewer random sequences than in-process stores.
  { limiter: { runs: 10 } },
);
