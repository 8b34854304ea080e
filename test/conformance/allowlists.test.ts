import { createAccount, issueApiKey } from "@petstore/core";
import { beforeEach, describe, expect, it } from "vitest";
import { ADAPTER_KITS, beforeEachWorld, errorBody, openWorld, type World } from "./harness.js";

describe.each(ADAPTER_KITS)("address allowlists on $name", (kit) => {
  let world: World;
  let limited: { key: string; id: string };
  beforeEachWorld(kit, {}, (opened) => (world = opened));
  beforeEach(async () => {
    const { key, record } = await issueApiKey(world.adapters.keys, {
      plan: "free",
      allowFrom: ["127.0.0.2/32", "2001:db8::/32"],
    });
    limited = { key, id: record.id };
  });
  const from = (address: string, path = "/v1/pets") => world.call("GET", path, { key: limited.key, address });

  it("serves a key from inside its ranges, IPv4, IPv6 and IPv4-mapped IPv6", async () => {
    for (const address of ["127.0.0.2", "2001:db8::7", "2001:db8:ffff::1", "::ffff:127.0.0.2"])
      expect((await from(address)).status, address).toBe(200);
  });

  it("answers 403 address_not_allowed from outside them, with the rate-limit headers of the key", async () => {
    const response = await from("127.0.0.1");
    expect(response.headers.get("x-ratelimit-limit")).toBe("60");
    expect(response.headers.get("x-ratelimit-remaining")).toBe("59");
    expect(response.headers.get("ratelimit")).toMatch(/^"minute";r=59;t=\d+$/);
    expect(response.headers.has("www-authenticate")).toBe(false);
    await errorBody(response, 403, "address_not_allowed");
    expect((await from("2001:db9::1")).status).toBe(403);
    expect((await from("127.0.0.2")).headers.get("x-ratelimit-remaining")).toBe("57");
  });

  it("refuses from outside the ranges before routing: an unknown path is 403 too", async () => {
    await errorBody(await from("127.0.0.1", "/v1/cats"), 403, "address_not_allowed");
  });

  it("serves the public document to the key from anywhere", async () => {
    expect((await from("127.0.0.1", "/v1/openapi.json")).status).toBe(200);
  });

  it("lets a key without ranges in from anywhere", async () => {
    const open = await world.key();
    expect((await world.call("GET", "/v1/pets", { key: open, address: "198.51.100.9" })).status).toBe(200);
  });

  it("applies a change of ranges made elsewhere within 5 s", async () => {
    expect((await from("127.0.0.1")).status).toBe(403);
    await world.adapters.keys.update(limited.id, { allowFrom: null }, { actor: { who: "test" } });
    expect((await from("127.0.0.1")).status).toBe(403);
    world.clock.now += 5_000;
    expect((await from("127.0.0.1")).status).toBe(200);
  });

  describe("of an account", () => {
    const ACTOR = { actor: { who: "test" } };
    let account: string;
    let inAccount: string;
    let both: string;
    beforeEach(async () => {
      account = (await createAccount(world.adapters.keys, { name: "Shop", plan: "free", allowFrom: ["127.0.0.2/31"] }))
        .id;
      inAccount = (await issueApiKey(world.adapters.keys, { plan: "free" }, { accountId: account })).key;
      both = (
        await issueApiKey(world.adapters.keys, { plan: "free", allowFrom: ["127.0.0.3/32"] }, { accountId: account })
      ).key;
    });
    const call = (key: string, address: string) => world.call("GET", "/v1/pets", { key, address });

    it("serves its key from inside the account's ranges, IPv4-mapped IPv6 too", async () => {
      for (const address of ["127.0.0.2", "127.0.0.3", "::ffff:127.0.0.2"])
        expect((await call(inAccount, address)).status, address).toBe(200);
    });

    it("answers its key 403 address_not_allowed from outside them, counted as the key's request", async () => {
      const response = await call(inAccount, "127.0.0.1");
      expect(response.headers.get("x-ratelimit-limit")).toBe("60");
      expect(response.headers.get("x-ratelimit-remaining")).toBe("59");
      await errorBody(response, 403, "address_not_allowed");
      expect((await call(inAccount, "127.0.0.2")).headers.get("x-ratelimit-remaining")).toBe("58");
    });

    it("serves a key with ranges of its own only from inside both its and its account's", async () => {
      expect((await call(both, "127.0.0.3")).status).toBe(200);
      await errorBody(await call(both, "127.0.0.2"), 403, "address_not_allowed");
      await errorBody(await call(both, "127.0.0.4"), 403, "address_not_allowed");
    });

    it("applies a change of the account's ranges made elsewhere within 5 s", async () => {
      expect((await call(inAccount, "127.0.0.1")).status).toBe(403);
      await world.adapters.keys.updateAccount(account, { allowFrom: null }, ACTOR);
      expect((await call(inAccount, "127.0.0.1")).status).toBe(403);
      world.clock.now += 5_000;
      expect((await call(inAccount, "127.0.0.1")).status).toBe(200);
    });
  });

  it("reads the client address from X-Forwarded-For only when the socket is a trusted proxy", async () => {
    const proxied = await openWorld(kit, { trustProxy: ["10.0.0.1/32"] });
    try {
      const { key } = await issueApiKey(proxied.adapters.keys, { plan: "free", allowFrom: ["127.0.0.2/32"] });
      const via = (socket: string, forwardedFor: string) =>
        proxied.call("GET", "/v1/pets", { key, address: socket, headers: { "X-Forwarded-For": forwardedFor } });
      expect((await via("10.0.0.1", "127.0.0.2")).status).toBe(200);
      await errorBody(await via("10.0.0.1", "127.0.0.1"), 403, "address_not_allowed");
      await errorBody(await via("10.0.0.9", "127.0.0.2"), 403, "address_not_allowed");
    } finally {
      await proxied.close();
    }
  });
});
