import { memoryIdempotency } from "./idempotency.js";
import { memoryKeys } from "./keys.js";
import type { Adapters } from "@petstore/core";
import { type MemoryLimiter, memoryLimiter, type MemoryLimiterOptions } from "./limiter.js";
import { memoryStore, type MemoryStoreOptions } from "./store.js";

export { memoryIdempotency, type MemoryIdempotencyOptions } from "./idempotency.js";
export { memoryAdminTokens } from "./admin-tokens.js";
export { memoryKeys, type MemoryKeysOptions } from "./keys.js";
export { memoryLimiter, type MemoryLimiter, type MemoryLimiterOptions } from "./limiter.js";
export { memoryStore, type MemoryStoreOptions } from "./store.js";

/**
 * All four memory adapters, wired together (the store completes the idempotency store's
 * claims): spread them into `createPetstore`. `clock` decides the limiter's windows and bans
 * and the idempotency records' ages (default `Date.now`). Memory lives in this process, so its
 * clock is the process's: the bundle carries the `clock` it was given, and spread into
 * `createPetstore` it is the server's clock too, and its monotonic one (how long a verified
 * key is kept); a test moves time in one place.
 * @example const petstore = createPetstore({ ...memoryAdapters({ clock: () => now }) });
 */
export function memoryAdapters(
  options: Omit<MemoryStoreOptions, "idempotency"> & MemoryLimiterOptions = {},
): Adapters & { limiter: MemoryLimiter; clock?: () => number; monotonicClock?: () => number } {
  const idempotency = memoryIdempotency({ clock: options.clock });
  return {
    store: memoryStore({ ...options, idempotency }),
    keys: memoryKeys({ clock: options.clock }),
    limiter: memoryLimiter(options),
    idempotency,
    ...(options.clock && { clock: options.clock, monotonicClock: options.clock }),
  };
}
