import { memoryAdapters } from "@petstore/adapters/memory";
import { createPetstore, issueApiKey, type NewPet } from "@petstore/core";
import { describe, expect, it } from "vitest";
import { type PetstoreApi, PetstoreError, restock } from "./restock.js";

/**
 * The Pet Store in memory, on a clock the test moves: no server, no socket, no sleeping.
 * `perMinute` shrinks the Free plan so a test reaches the limit in a few calls. `keyCacheMs: 0`
 * makes a revoked key fail at its next request (a server trusts a verified key for 5 s).
 */
async function petstoreInMemory(options: { pets?: NewPet[]; perMinute?: number } = {}) {
  let now = Date.parse("2030-01-01T12:00:10Z");
  // The memory adapters' clock is the whole API's: windows, bans and Retry-After follow it.
  const adapters = memoryAdapters({ seed: { pets: options.pets ?? [] }, clock: () => now });
  const petstore = createPetstore({
    ...adapters,
    keyCacheMs: 0,
    plans: { free: { perMinute: options.perMinute ?? 60, perDay: 1_000 } },
  });
  const { key, record } = await issueApiKey(adapters.keys, { plan: "free" });
  // The caller's address, as a server would pass it: callers without a valid key are limited by it.
  const fetch = (request: Request) => petstore.fetch(request, { clientAddress: "192.0.2.10" });
  const api: PetstoreApi = { baseUrl: "http://petstore.test/v1", apiKey: key, fetch };
  return {
    api,
    store: adapters.store,
    revokeKey: () => adapters.keys.revoke(record.id),
    advanceClock: (ms: number) => (now += ms),
  };
}

describe("restock", () => {
  it("adds only the pets the category is missing", async () => {
    const { api, store } = await petstoreInMemory({
      pets: [
        { name: "Rex", categoryId: 1, status: "available" },
        { name: "Tom", categoryId: 1, status: "sold" },
        { name: "Kit", categoryId: 2, status: "available" },
      ],
    });

    const added = await restock(api, 1, 3);

    expect(added).toEqual([
      { id: 4, name: "Stray 2", categoryId: 1, status: "available" },
      { id: 5, name: "Stray 3", categoryId: 1, status: "available" },
    ]);
    const available = await store.listPets({ limit: 100, status: "available" });
    expect(available.filter((pet) => pet.categoryId === 1).map((pet) => pet.name)).toEqual([
      "Rex",
      "Stray 2",
      "Stray 3",
    ]);
  });

  it("adds nothing when the category is already stocked", async () => {
    const { api } = await petstoreInMemory({ pets: [{ name: "Rex", categoryId: 1, status: "available" }] });
    expect(await restock(api, 1, 1)).toEqual([]);
  });

  it("fails with the API's error code when the key is wrong", async () => {
    const { api } = await petstoreInMemory();
    const failure = restock({ ...api, apiKey: "psk_wrong" }, 1, 1);
    await expect(failure).rejects.toMatchObject({ status: 401, code: "unauthorized" });
  });

  it("fails with 401 once its key is revoked", async () => {
    const { api, revokeKey } = await petstoreInMemory();
    expect(await restock(api, 1, 1)).toHaveLength(1);
    await revokeKey();
    await expect(restock(api, 1, 2)).rejects.toMatchObject({ status: 401, code: "unauthorized" });
  });

  it("gets 429 with Retry-After over the limit, and succeeds once the minute window has passed", async () => {
    const { api, advanceClock } = await petstoreInMemory({ perMinute: 3 });
    await restock(api, 1, 2); // one list and two creates: the whole minute's allowance

    const refused = await restock(api, 1, 3).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PetstoreError);
    expect(refused).toMatchObject({ status: 429, code: "rate_limited", retryAfter: 50 });

    advanceClock(50_000);
    expect(await restock(api, 1, 3)).toMatchObject([{ name: "Stray 3" }]);
  });
});
