import { storeContracts } from "@petstore/core/testing";
import { memoryAdapters, memoryAdminTokens, memoryKeys, memoryLimiter } from "./index.js";

storeContracts("memory", {
  store: async (clock) => {
    const { store, idempotency } = memoryAdapters({ clock });
    return { store, idempotency };
  },
  limiter: async (clock) => ({ limiter: memoryLimiter({ clock }) }),
  keys: async (clock) => ({ keys: memoryKeys({ clock }) }),
  adminTokens: async (clock) => ({ tokens: memoryAdminTokens({ clock }) }),
});
