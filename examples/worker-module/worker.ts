import type { Client } from "@libsql/client";
import { createClient } from "@libsql/client/web";
import { type D1Database, d1Adapters, migrateD1 } from "@petstore/adapters/d1";
import { type DurableObjectNamespace, durableObjectLimiter } from "@petstore/adapters/durable-objects";
import { libsqlAdapters, migrateLibsql } from "@petstore/adapters/libsql";
import { memoryAdapters } from "@petstore/adapters/memory";
import { type ApiKeys, createPetstore, hashApiKey, isWellFormedApiKey, type Petstore } from "@petstore/core";

// The class of the LIMITER binding: the runtime constructs it from the worker's exports.
export { PetstoreRateLimiter } from "@petstore/adapters/durable-objects";

/** The bindings this worker reads (see wrangler.toml; secrets with `wrangler secret put`). */
export interface Env {
  /** A D1 database: pets, orders, keys, idempotency records (and rate limits without `LIMITER`). */
  DB?: D1Database;
  /** The `PetstoreRateLimiter` Durable Object namespace: rate limits, one object per bucket. */
  LIMITER?: DurableObjectNamespace;
  /**
   * Without `DB`: a libSQL server or Turso database, `libsql://...` or `https://...`. Without
   * either the worker serves from memory, for trying it out: each isolate then has its own
   * pets and limits.
   */
  LIBSQL_URL?: string;
  LIBSQL_AUTH_TOKEN?: string;
  /** A key to store on the first request unless stored already: any well-formed `psk_` key, on the Free plan. */
  PETSTORE_API_KEY?: string;
}

type Adapters = ReturnType<typeof d1Adapters>;

/** Stores the key of the binding unless the database has it (another isolate may be storing it now). */
async function registerKey(keys: ApiKeys, key: string): Promise<void> {
  if (!isWellFormedApiKey(key)) throw new TypeError("PETSTORE_API_KEY is not a well-formed psk_ key");
  const hash = await hashApiKey(key);
  if (await keys.findByHash(hash)) return;
  try {
    await keys.insert({ id: "key_worker", hash, plan: "free", createdAt: Date.now() });
  } catch (error) {
    if (!(await keys.findByHash(hash))) throw error;
  }
}

/** The adapters on the database of the bindings, migrated: D1, else libSQL, else memory; limits in Durable Objects when bound. */
async function adaptersFor(env: Env, connect: (env: Env & { LIBSQL_URL: string }) => Client): Promise<Adapters> {
  let adapters: Adapters;
  if (env.DB !== undefined) {
    await migrateD1(env.DB);
    adapters = d1Adapters(env.DB);
  } else if (env.LIBSQL_URL !== undefined) {
    const client = connect({ ...env, LIBSQL_URL: env.LIBSQL_URL });
    await migrateLibsql({ client });
    adapters = libsqlAdapters({ client });
  } else {
    adapters = memoryAdapters();
  }
  return env.LIMITER === undefined ? adapters : { ...adapters, limiter: durableObjectLimiter(env.LIMITER) };
}

/**
 * The Pet Store as a Workers-style module over the storage of its bindings: a D1 database
 * (`DB`) with rate limits in Durable Objects (`LIMITER`), or the libSQL database `connect`
 * opens. Every isolate shares them: pets, keys and rate limits are the same in all of them.
 * Workers allow no I/O at module scope and bindings arrive with the request, so the database
 * is migrated and given the key on the first request (again after a failed start).
 */
export function petstoreWorker(connect: (env: Env & { LIBSQL_URL: string }) => Client) {
  let started: Promise<Petstore> | undefined;
  async function start(env: Env): Promise<Petstore> {
    const adapters = await adaptersFor(env, connect);
    if (env.PETSTORE_API_KEY !== undefined) await registerKey(adapters.keys, env.PETSTORE_API_KEY);
    return createPetstore(adapters);
  }
  return {
    async fetch(request: Request, env: Env): Promise<Response> {
      started ??= start(env).catch((error: unknown) => {
        started = undefined;
        throw error;
      });
      const petstore = await started;
      // Cloudflare's edge sets CF-Connecting-IP to the client's address, replacing any the client sent.
      return petstore.fetch(request, { clientAddress: request.headers.get("CF-Connecting-IP") ?? undefined });
    },
  };
}

// `@libsql/client/web`: HTTP and WebSockets only, no native code, as Workers need.
export default petstoreWorker((env) =>
  createClient({ url: env.LIBSQL_URL, ...(env.LIBSQL_AUTH_TOKEN ? { authToken: env.LIBSQL_AUTH_TOKEN } : {}) }),
);
