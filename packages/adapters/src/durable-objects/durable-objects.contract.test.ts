import { rateLimiterContract } from "@petstore/core/testing";
import { useWorkerdBindings } from "../../../../test/_support/workerd.js";

// The rate-limiter contract against `PetstoreRateLimiter` objects in workerd (miniflare),
// through `durableObjectLimiter` over the namespace's binding proxy: fresh buckets per test.
const workerd = useWorkerdBindings(0);

// Every hit is a round trip through the binding proxy: fewer random sequences than in-process stores.
rateLimiterContract("durable objects", async (clock) => ({ limiter: await workerd.limiter(clock) }), { runs: 10 });
