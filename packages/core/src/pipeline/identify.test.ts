import { memoryKeys } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import { issueApiKey } from "../api-keys.js";
import type { ApiKeys } from "../ports.js";
import { identifyStage } from "./identify.js";

const T0 = Date.UTC(2030, 0, 15, 12);
const withAuth = (value?: string) =>
  new Request("http://petstore.test/v1/pets", value === undefined ? {} : { headers: { Authorization: value } });

/** Key storage that counts its lookups. */
function counted(keys: ApiKeys) {
  const lookups = { count: 0 };
  return {
    lookups,
    keys: {
      ...keys,
      findByHash: (hash: string) => {
        lookups.count++;
        return keys.findByHash(hash);
      },
    },
  };
}

describe("identifyStage", () => {
  it("finds the caller of a valid key, with any case of the Bearer scheme", async () => {
    const keys = memoryKeys();
    const { key, record } = await issueApiKey(keys, { plan: "pro" });
    const identify = identifyStage({ keys, keyCacheMs: 5_000 });
    expect(await identify(withAuth(`Bearer ${key}`), T0)).toEqual({ caller: record, keyCache: "miss" });
    expect((await identify(withAuth(`bEaReR ${key}`), T0)).caller).toEqual(record);
  });

  it("finds no caller without a header, for another scheme, a typo, an unknown or a revoked key (saying which key it was)", async () => {
    const keys = memoryKeys();
    const { key, record } = await issueApiKey(keys, { plan: "free" });
    const { key: revoked, record: revokedRecord } = await issueApiKey(keys, { plan: "free" });
    await keys.revoke(revokedRecord.id);
    const identify = identifyStage({ keys, keyCacheMs: 5_000 });
    expect(await identify(withAuth(), T0)).toEqual({ caller: undefined, sentKey: false });
    expect(await identify(withAuth(`Basic ${btoa("a:b")}`), T0)).toEqual({ caller: undefined, sentKey: false });
    expect(await identify(withAuth(`Bearer ${key.slice(0, -1)}${key.endsWith("x") ? "y" : "x"}`), T0)).toEqual({
      caller: undefined,
      sentKey: true,
    });
    expect(await identify(withAuth(`Bearer ${revoked}`), T0)).toEqual({
      caller: undefined,
      sentKey: true,
      keyCache: "miss",
      refused: { keyId: revokedRecord.id, reason: "revoked" },
    });
    expect(record.revokedAt).toBeUndefined();
  });

  it("asks storage nothing for a key whose checksum is wrong", async () => {
    const { keys, lookups } = counted(memoryKeys());
    const { key } = await issueApiKey(keys, { plan: "free" });
    await identifyStage({ keys, keyCacheMs: 5_000 })(
      withAuth(`Bearer ${key.slice(0, 10)}${key[10] === "a" ? "b" : "a"}${key.slice(11)}`),
      T0,
    );
    expect(lookups.count).toBe(0);
  });

  it("trusts a verified key for cacheMs, then asks storage again, so a revocation takes effect", async () => {
    const { keys, lookups } = counted(memoryKeys());
    const { key, record } = await issueApiKey(keys, { plan: "free" });
    const identify = identifyStage({ keys, keyCacheMs: 5_000 });
    expect((await identify(withAuth(`Bearer ${key}`), T0)).keyCache).toBe("miss");
    await keys.revoke(record.id);
    expect(await identify(withAuth(`Bearer ${key}`), T0 + 4_999)).toMatchObject({ caller: record, keyCache: "hit" });
    expect(lookups.count).toBe(1);
    expect(await identify(withAuth(`Bearer ${key}`), T0 + 5_000)).toEqual({
      caller: undefined,
      sentKey: true,
      keyCache: "miss",
      refused: { keyId: record.id, reason: "revoked" },
    });
    expect(lookups.count).toBe(2);
  });

  it("caches nothing when cacheMs is 0", async () => {
    const { keys, lookups } = counted(memoryKeys());
    const { key } = await issueApiKey(keys, { plan: "free" });
    const identify = identifyStage({ keys, keyCacheMs: 0 });
    await identify(withAuth(`Bearer ${key}`), T0);
    expect((await identify(withAuth(`Bearer ${key}`), T0)).keyCache).toBe("miss");
    expect(lookups.count).toBe(2);
  });
});
