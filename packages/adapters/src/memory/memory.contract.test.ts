import {
  adminTokensContract,
  apiKeysContract,
  idempotencyContract,
  keyUsageContract,
  petStoreContract,
  rateLimiterContract,
} from "@petstore/core/testing";
import { memoryAdapters, memoryAdminTokens, memoryKeys, memoryLimiter } from "./index.js";

const storeFixture = async (clock: (() => number) | undefined) => {
  const { store, idempotency } = memoryAdapters({ clock });
  return { store, idempotency };
};

petStoreContract("memory", storeFixture);
idempotencyContract("memory", storeFixture);
rateLimiterContract("memory", async (clock) => ({ limiter: memoryLimiter({ clock }) }));
apiKeysContract("memory", async (clock) => ({ keys: memoryKeys({ clock }) }));
keyUsageContract("memory", async (clock) => ({ keys: memoryKeys({ clock }) }));
adminTokensContract("memory", async (clock) => ({ tokens: memoryAdminTokens({ clock }) }));
