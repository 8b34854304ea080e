// Type-checked by ../packages.test.ts in a project that installed the packed tarballs, under
// "moduleResolution" bundler, node16 and node10: the public API as a consumer writes it.
import { type D1Database, d1Adapters } from "@petstore/adapters/d1";
import { type DurableObjectNamespace, durableObjectLimiter } from "@petstore/adapters/durable-objects";
import { libsqlAdapters, migrateLibsql } from "@petstore/adapters/libsql";
import { connectLibsql } from "@petstore/adapters/libsql/connect";
import { memoryAdapters, memoryLimiter } from "@petstore/adapters/memory";
import { createPetstore, issueApiKey, StorageUnavailableError } from "@petstore/core";
import type { Decision, HitInput, Petstore, PetstoreOptions, RateLimiter } from "@petstore/core";
import { apiKeysContract, idempotencyContract, petStoreContract, rateLimiterContract } from "@petstore/core/testing";

/** A custom adapter: a limiter that refuses to decide while its switch is off. */
function switchableLimiter(inner: RateLimiter, isOn: () => boolean): RateLimiter {
  return {
    hit(input: HitInput): Promise<Decision> {
      if (!isOn()) throw new StorageUnavailableError("limiter switched off");
      return inner.hit(input);
    },
  };
}

const options: PetstoreOptions = {
  ...memoryAdapters(),
  limiter: switchableLimiter(memoryLimiter(), () => true),
  basePath: "/api",
  plans: { free: { perMinute: 30, perDay: 500 } },
  ban: { threshold: 10 },
  clock: () => 1_767_225_600_000,
  trustProxy: ["10.0.0.0/8"],
  ietfRateLimitHeaders: false,
  onResponse: ({ response, durationMs }) => console.log(response.status, durationMs),
};
const petstore: Petstore = createPetstore(options);
const { key } = await issueApiKey(options.keys, { plan: "pro", label: "shop" });
const response: Response = await petstore.fetch(
  new Request("http://localhost/api/pets", { headers: { authorization: `Bearer ${key}` } }),
  {
    clientAddress: "127.0.0.1",
  },
);
console.log(response.status);

// @ts-expect-error: basePath is a string (this line fails the check if the types were `any`)
createPetstore({ ...memoryAdapters(), basePath: 42 });

/** A Workers module's Pet Store: D1, limits in Durable Objects (type-checked here, run in test/edge). */
export const edgePetstore = (env: { DB: D1Database; LIMITER: DurableObjectNamespace }): Petstore =>
  createPetstore({ ...d1Adapters(env.DB), limiter: durableObjectLimiter(env.LIMITER) });

const db = await connectLibsql({ url: "file:consumer.db" });
await migrateLibsql(db);
createPetstore(libsqlAdapters(db));
db.close();

rateLimiterContract("switchable", async (clock) => ({
  limiter: switchableLimiter(memoryLimiter({ clock }), () => true),
}));
petStoreContract("memory", async (clock) => {
  const { store, idempotency } = memoryAdapters({ clock });
  return { store, idempotency };
});
apiKeysContract("memory", async (clock) => ({ keys: memoryAdapters({ clock }).keys }));
idempotencyContract("memory", async (clock) => memoryAdapters({ clock }));
