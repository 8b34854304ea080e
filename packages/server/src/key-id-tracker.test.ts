import { memoryKeys } from "@petstore/adapters/memory";
import { issueApiKey } from "@petstore/core";
import { describe, expect, it } from "vitest";
import { keyIdTracker } from "./key-id-tracker.js";

async function setup() {
  const stored = memoryKeys();
  const { key, record } = await issueApiKey(stored, { plan: "free" });
  const tracker = keyIdTracker(stored);
  const request = new Request("http://petstore.test/v1/pets", { headers: { authorization: `Bearer ${key}` } });
  return { stored, record, tracker, request };
}

describe("keyIdTracker", () => {
  it("knows no key until storage has found it by hash", async () => {
    const { record, tracker, request } = await setup();
    expect(await tracker.keyIdOf(request)).toBeUndefined();
    expect(await tracker.keys.findByHash(record.hash)).toEqual(record);
    expect(await tracker.keyIdOf(request)).toBe(record.id);
  });

  it("forgets a key once storage reports it revoked", async () => {
    const { stored, record, tracker, request } = await setup();
    await tracker.keys.findByHash(record.hash);
    await stored.revoke(record.id, 1);
    await tracker.keys.findByHash(record.hash);
    expect(await tracker.keyIdOf(request)).toBeUndefined();
  });

  it("names no key for a missing, malformed or unknown bearer", async () => {
    const { record, tracker } = await setup();
    await tracker.keys.findByHash(record.hash);
    for (const authorization of [undefined, "Basic abc", "Bearer psk_short", `Bearer psk_${"A".repeat(38)}`]) {
      const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
      expect(await tracker.keyIdOf(new Request("http://petstore.test/", { headers })), authorization).toBeUndefined();
    }
  });

  it("passes every other call through to the wrapped port", async () => {
    const { stored, record, tracker } = await setup();
    expect(await tracker.keys.list()).toEqual(await stored.list());
    expect(await tracker.keys.revoke(record.id, 5)).toBe(true);
    expect((await stored.list())[0]!.revokedAt).toBe(5);
  });
});
