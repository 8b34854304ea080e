import type { Client } from "@libsql/client";
import { createClient } from "@libsql/client/web";
import { libsqlAdapters, migrate } from "@petstore/adapters/libsql";
import { memoryAdapters } from "@petstore/adapters/memory";
import { type ApiKeys, createPetstore, hashApiKey, isWellFormedApiKey, type Petstore } from "@petstore/core";

/** The bindings this worker reads (on Workers: `wrangler secret put ...` for each). */
export interface Env {
  /**
   * The libSQL server or Turso database: `libsql://...` or `https://...`. Without it the
   * worker serves from memory, for trying it out: each isolate then has its own pets and
   * limits.
   */
  LIBSQL_URL?: string;
  LIBSQL_AUTH_TOKEN?: string;
  /** The API key callers send; any well-formed `psk_` key. */
  PETSTORE_API_KEY: string;
}

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

/** The adapters on the database of the bindings, migrated; in memory without `LIBSQL_URL`. */
async function adaptersFor(env: Env, connect: (env: Env & { LIBSQL_URL: string }) => Client): Promise<ReturnType<typeof libsqlAdapters>> {
  if (env.LIBSQL_URL === undefined) return memoryAdapters();
  const client = connect({ ...env, LIBSQL_URL: env.LIBSQL_URL });
  await migrate({ client });
  return libsqlAdapters({ client });
}

/**
 * The Pet Store as a Workers-style module over the libSQL database `connect` opens for the
 * bindings. Every isolate shares that database: pets, keys and rate limits are the same in
 * all of them. Workers allow no I/O at module scope and bindings arrive with the request, so
 * the database is opened, migrated and given the key on the first request (again after a
 * failed start).
 */
export function petstoreWorker(connect: (env: Env & { LIBSQL_URL: string }) => Client) {
  let started: Promise<Petstore> | undefined;
  async function start(env: Env): Promise<Petstore> {
    const adapters = await adaptersFor(env, connect);
    await registerKey(adapters.keys, env.PETSTORE_API_KEY);
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
export default petstoreWorker((env) => createClient({ url: env.LIBSQL_URL, ...(env.LIBSQL_AUTH_TOKEN ? { authToken: env.LIBSQL_AUTH_TOKEN } : {}) }));
