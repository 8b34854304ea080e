import { rateLimiterContract } from "@petstore/core/testing";
import { useWorkerdBindings } from "../../../../test/_support/workerd.js";

// The rate-limiter contract against `PetstoreRateLimiter` objects in workerd (miniflare),
// through `durableObjectLimiter` over the namespace's binding proxy: fresh buckets per test.
const workerd = useWorkerdBindings(0);

rateLimiterContract("durable objects", async (clock) => ({ limiter: await workerd.limiter(clock) }));
