import { apiKeysContract, idempotencyContract, petStoreContract, rateLimiterContract } from "@petstore/core/testing";
import { memoryAdapters, memoryKeys, memoryLimiter } from "./index.js";

const storeFixture = async () => {
  const { store, idempotency } = memoryAdapters();
  return { store, idempotency };
};

petStoreContract("memory", storeFixture);
idempotencyContract("memory", storeFixture);
rateLimiterContract("memory", async () => ({ limiter: memoryLimiter() }));
apiKeysContract("memory", async () => ({ keys: memoryKeys() }));
