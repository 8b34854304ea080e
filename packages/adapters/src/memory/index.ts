import { memoryIdempotency } from "./idempotency.js";
import { memoryKeys } from "./keys.js";
import { memoryLimiter, type MemoryLimiterOptions } from "./limiter.js";
import { memoryStore, type MemoryStoreOptions } from "./store.js";

export { memoryIdempotency } from "./idempotency.js";
export { memoryKeys } from "./keys.js";
export { memoryLimiter, type MemoryLimiter, type MemoryLimiterOptions } from "./limiter.js";
export { memoryStore, type MemoryStoreOptions } from "./store.js";

/**
 * All four memory adapters, wired together (the store completes the idempotency store's
 * claims): spread them into `createPetstore`.
 * @example const petstore = createPetstore({ ...memoryAdapters() });
 */
export function memoryAdapters(options: Omit<MemoryStoreOptions, "idempotency"> & MemoryLimiterOptions = {}) {
  const idempotency = memoryIdempotency();
  return {
    store: memoryStore({ ...options, idempotency }),
    keys: memoryKeys(),
    limiter: memoryLimiter(options),
    idempotency,
  };
}
