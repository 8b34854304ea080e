import { memoryAdapters } from "@petstore/adapters/memory";
import { createPetstore, hashApiKey, isWellFormedApiKey } from "@petstore/core";

/** The bindings this worker reads (on Workers: `wrangler secret put PETSTORE_API_KEY`). */
export interface Env {
  /** The API key callers send; any well-formed `psk_` key. */
  PETSTORE_API_KEY: string;
}

// Module scope lives as long as the isolate: each isolate has its own pets and counters.
const adapters = memoryAdapters();
const petstore = createPetstore(adapters);
let keyRegistered: Promise<void> | undefined;

async function registerKey(key: string): Promise<void> {
  if (!isWellFormedApiKey(key)) throw new TypeError("PETSTORE_API_KEY is not a well-formed psk_ key");
  await adapters.keys.insert({ id: "key_worker", hash: await hashApiKey(key), plan: "free", createdAt: Date.now() });
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    // Workers allow no I/O at module scope and bindings arrive with the request: register on first use.
    keyRegistered ??= registerKey(env.PETSTORE_API_KEY);
    await keyRegistered;
    // Cloudflare's edge sets CF-Connecting-IP to the client's address, replacing any the client sent.
    return petstore.fetch(request, { clientAddress: request.headers.get("CF-Connecting-IP") ?? undefined });
  },
};
