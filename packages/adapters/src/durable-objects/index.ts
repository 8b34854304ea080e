// Rate limits in Durable Objects, for any store (D1, libSQL, ...). No `node:` import, no
// native code and no `cloudflare:` module: the class is a plain one the runtime constructs.
export type { DurableObjectNamespace } from "./durable-object-limiter.js";
export type { DurableObjectState } from "./_storage-engine.js";
export type { StoreClockOptions } from "../_sql/store-clock.js";
export { durableObjectLimiter } from "./durable-object-limiter.js";
export { PetstoreRateLimiter } from "./petstore-rate-limiter.js";
