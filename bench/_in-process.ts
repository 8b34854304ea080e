import * as today from "@petstore/core";
import type { Adapters, Petstore, PetstoreOptions } from "@petstore/core";
import type { Call } from "./_abba.js";
import { SEED_PETS } from "./_seed.js";

export const URL_BASE = "http://petstore.test/v1/pets";
const POST_BODY = JSON.stringify({ name: "Rex", categoryId: 1 });

/** What a petstore is made with: today's `@petstore/core`, or an earlier commit's (bench/_before.ts). */
export type Core = Pick<typeof today, "createPetstore" | "issueApiKey">;

/**
 * GET and POST through a petstore of `core` on `adapters` (with `options`), seeded with the
 * 20 pets, with an unlimited enterprise key of its own; and the petstore.
 */
export async function petstoreCalls(
  adapters: Adapters,
  options: Partial<PetstoreOptions> = {},
  core: Core = today,
): Promise<{ get: Call; post: Call; petstore: Petstore }> {
  const { createPetstore, issueApiKey } = core;
  const { key } = await issueApiKey(adapters.keys, { plan: "enterprise", perMinute: 1e9, perDay: 1e9 });
  const petstore = createPetstore({ ...adapters, ...options });
  const info = { clientAddress: "127.0.0.1" };
  const authorization = `Bearer ${key}`;
  const create = async (body: string) => {
    const response = await petstore.fetch(
      new Request(URL_BASE, {
        method: "POST",
        headers: { Authorization: authorization, "Content-Type": "application/json" },
        body,
      }),
      info,
    );
    if (response.status !== 201) throw new Error(`POST answered ${response.status}: ${await response.text()}`);
    await response.text();
  };
  for (const pet of SEED_PETS) await create(JSON.stringify(pet));
  const get = async () => {
    const response = await petstore.fetch(new Request(URL_BASE, { headers: { Authorization: authorization } }), info);
    if (response.status !== 200) throw new Error(`GET answered ${response.status}: ${await response.text()}`);
    await response.text();
  };
  return { get, post: () => create(POST_BODY), petstore };
}
