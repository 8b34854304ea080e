import { memoryKeys } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import { createAccount, updateAccount } from "../keys/account-life.js";
import { issueApiKey } from "../keys/issue-api-key.js";
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
    // Found with its account's plan and limits, read with the key.
    const caller = { ...record, account: { plan: "pro" } };
    expect(await identify(withAuth(`Bearer ${key}`), T0)).toEqual({ caller, keyCache: "miss" });
    expect((await identify(withAuth(`bEaReR ${key}`), T0)).caller).toEqual(caller);
  });

  it("finds no caller without a header, for another scheme, a typo, an unknown key, and a revoked key by its id", async () => {
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
    expect(await identify(withAuth(`Bearer ${(await issueApiKey(memoryKeys(), { plan: "free" })).key}`), T0)).toEqual({
      caller: undefined,
      sentKey: true,
      keyCache: "miss",
    });
    expect(record.revokedAt).toBeUndefined();
  });

  it("finds an expired key and a rolled-out secret as callers: lapse refuses them at the limiter's instant", async () => {
    const keys = memoryKeys({ clock: () => T0 });
    const { key, record } = await issueApiKey(keys, { plan: "free", expiresAt: T0 + 1 }, { now: T0 });
    const identify = identifyStage({ keys, keyCacheMs: 5_000 });
    expect((await identify(withAuth(`Bearer ${key}`), T0 + 10_000)).caller?.id).toBe(record.id);
    const { key: old, record: rolled } = await issueApiKey(keys, { plan: "free" });
    await keys.roll(rolled.id, "f".repeat(64), 0, { actor: { who: "test" } });
    expect(await identify(withAuth(`Bearer ${old}`), T0 + 10_000)).toMatchObject({
      caller: { id: rolled.id },
      oldSecret: true,
    });
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
    expect(await identify(withAuth(`Bearer ${key}`), T0 + 5_000)).toMatchObject({
      caller: undefined,
      sentKey: true,
      keyCache: "miss",
      refused: { keyId: record.id, reason: "revoked" },
    });
    expect(lookups.count).toBe(2);
  });

  it("trusts a cached key's account for cacheMs too, then reads the account's change with the key", async () => {
    const keys = memoryKeys();
    const account = await createAccount(keys, { name: "Shop", plan: "pro", allowFrom: ["10.0.0.0/8"] });
    const { key } = await issueApiKey(keys, { plan: "pro" }, { accountId: account.id });
    const identify = identifyStage({ keys, keyCacheMs: 5_000 });
    await identify(withAuth(`Bearer ${key}`), T0);
    await updateAccount(keys, account.id, { allowFrom: ["192.0.2.0/24"] }, { who: "test" });
    expect((await identify(withAuth(`Bearer ${key}`), T0 + 4_999)).caller?.account?.allowFrom).toEqual(["10.0.0.0/8"]);
    expect(await identify(withAuth(`Bearer ${key}`), T0 + 5_000)).toMatchObject({
      caller: { account: { allowFrom: ["192.0.2.0/24"] } },
      keyCache: "miss",
    });
  });

  it("forgets a key's verified headers when told, so its next request asks storage", async () => {
    const { keys, lookups } = counted(memoryKeys());
    const { key, record } = await issueApiKey(keys, { plan: "free" });
    const { key: other } = await issueApiKey(keys, { plan: "free" });
    const identify = identifyStage({ keys, keyCacheMs: 5_000 });
    await identify(withAuth(`Bearer ${key}`), T0);
    await identify(withAuth(`bearer ${key}`), T0);
    await identify(withAuth(`Bearer ${other}`), T0);
    await keys.revoke(record.id);
    identify.forget(record.id);
    expect((await identify(withAuth(`Bearer ${key}`), T0 + 1)).refused).toEqual({
      keyId: record.id,
      reason: "revoked",
    });
    expect((await identify(withAuth(`bearer ${key}`), T0 + 1)).refused).toEqual({
      keyId: record.id,
      reason: "revoked",
    });
    expect((await identify(withAuth(`Bearer ${other}`), T0 + 1)).keyCache).toBe("hit");
    expect(lookups.count).toBe(5);
  });

  it("caches no record a lookup found while the key was being forgotten", async () => {
    const keys = memoryKeys();
    const { key, record } = await issueApiKey(keys, { plan: "free" });
    let identify: ReturnType<typeof identifyStage>;
    const slow = {
      ...keys,
      findByHash: async (hash: string) => {
        const found = await keys.findByHash(hash);
        // The change lands, and is told, while this lookup is out with the record before it.
        await keys.revoke(record.id);
        identify.forget(record.id);
        return found;
      },
    };
    identify = identifyStage({ keys: slow, keyCacheMs: 5_000 });
    expect((await identify(withAuth(`Bearer ${key}`), T0)).caller?.id).toBe(record.id);
    expect((await identify(withAuth(`Bearer ${key}`), T0 + 1)).refused).toEqual({
      keyId: record.id,
      reason: "revoked",
    });
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
