import { generateApiKey, issueApiKey } from "@petstore/core";
import { describe, expect, it, vi } from "vitest";
import { ADAPTER_KITS, beforeEachWorld, errorBody, openWorld, type World } from "./harness.js";

describe.each(ADAPTER_KITS)("authentication on $name", (kit) => {
  let world: World;
  let key: string;
  beforeEachWorld(kit, {}, (opened, freeKey) => ([world, key] = [opened, freeKey]));

  const routes = [
    ["GET", "/v1/pets"],
    ["POST", "/v1/pets"],
    ["GET", "/v1/pets/1"],
    ["GET", "/v1/store/orders"],
  ] as const;

  it.each(routes)("%s %s without a key returns 401 unauthorized with a Bearer challenge", async (method, path) => {
    const response = await world.call(method, path, method === "POST" ? { body: { name: "Rex", categoryId: 1 } } : {});
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="petstore"');
    await errorBody(response, 401, "unauthorized");
  });

  it.each([
    ["another scheme", "Token abc"],
    ["Basic credentials", "Basic dXNlcjpwYXNz"],
  ])("returns 401 with a plain Bearer challenge (no error code) for %s", async (_what, header) => {
    const response = await world.call("GET", "/v1/pets", { headers: { Authorization: header } });
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="petstore"');
    await errorBody(response, 401, "unauthorized");
  });

  it.each([
    ["the scheme alone", "Bearer"],
    ["a token with spaces", "Bearer psk_a psk_b"],
    ["a key without the psk_ prefix", "Bearer sk_live_1234567890"],
    ["a key with a typo (bad checksum)", "typo"],
    ["a well-formed key that was never issued", "unknown"],
  ])("returns 401 invalid_token for %s", async (_what, header) => {
    const value =
      header === "typo"
        ? `Bearer ${key.slice(0, 10)}${key[10] === "a" ? "b" : "a"}${key.slice(11)}`
        : header === "unknown"
          ? `Bearer ${generateApiKey(() => "A".repeat(32))}`
          : header;
    const response = await world.call("GET", "/v1/pets", { headers: { Authorization: value } });
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="petstore", error="invalid_token"');
    await errorBody(response, 401, "unauthorized");
  });

  it("rejects a key with a bad checksum without a storage lookup", async () => {
    const lookup = vi.spyOn(world.adapters.keys, "findByHash");
    const typo = key.slice(0, -1) + (key.endsWith("a") ? "b" : "a");
    expect((await world.call("GET", "/v1/pets", { key: typo })).status).toBe(401);
    expect(lookup).not.toHaveBeenCalled();
    expect((await world.call("GET", "/v1/pets", { key })).status).toBe(200);
    expect(lookup).toHaveBeenCalledTimes(1);
  });

  it.each(["Bearer", "bearer", "BEARER", "BeArEr"])("accepts the scheme written '%s'", async (scheme) => {
    const response = await world.call("GET", "/v1/pets", { headers: { Authorization: `${scheme} ${key}` } });
    expect(response.status).toBe(200);
  });

  it("rejects a revoked key within 5 seconds", async () => {
    expect((await world.call("GET", "/v1/pets", { key })).status).toBe(200);
    const [record] = await world.adapters.keys.list();
    expect((await world.adapters.keys.revoke(record!.id)).state).toBe("changed");
    world.clock.now += 5_000;
    const response = await world.call("GET", "/v1/pets", { key });
    expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"');
    await errorBody(response, 401, "unauthorized");
  });

  it("rejects a revoked key at once when it was never cached", async () => {
    const { key: fresh, record } = await issueApiKey(world.adapters.keys, { plan: "pro" }, { now: world.clock.now });
    await world.adapters.keys.revoke(record.id);
    await errorBody(await world.call("GET", "/v1/pets", { key: fresh }), 401, "unauthorized");
  });

  it("serves the OpenAPI document without a key", async () => {
    const response = await world.call("GET", "/v1/openapi.json");
    expect(response.status).toBe(200);
    expect(((await response.json()) as { openapi: string }).openapi).toBe("3.1.0");
  });

  it("counts unauthenticated requests against the client address with the Free plan's limits", async () => {
    const response = await world.call("GET", "/v1/pets", { address: "198.51.100.1" });
    expect(response.headers.get("x-ratelimit-limit")).toBe("60");
    expect(response.headers.get("x-ratelimit-remaining")).toBe("59");
    const again = await world.call("GET", "/v1/pets", {
      address: "198.51.100.1",
      headers: { Authorization: "Bearer nope" },
    });
    expect(again.headers.get("x-ratelimit-remaining")).toBe("58");
    const otherAddress = await world.call("GET", "/v1/pets", { address: "198.51.100.2" });
    expect(otherAddress.headers.get("x-ratelimit-remaining")).toBe("59");
  });

  it("counts anonymous IPv6 callers per /64, so a client cannot rotate addresses out of its limits", async () => {
    await world.call("GET", "/v1/pets", { address: "2001:db8:7:1::1" });
    const sameNetwork = await world.call("GET", "/v1/pets", { address: "2001:db8:7:1:abcd::99" });
    expect(sameNetwork.headers.get("x-ratelimit-remaining")).toBe("58");
    const otherNetwork = await world.call("GET", "/v1/pets", { address: "2001:db8:7:2::1" });
    expect(otherNetwork.headers.get("x-ratelimit-remaining")).toBe("59");
  });

  it("stops key guessing: one address guessing keys is rate-limited, then banned", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 95; i++) {
      const guess = generateApiKey(() => String(i).padStart(32, "G"));
      statuses.push(
        (await world.call("GET", "/v1/pets", { headers: { Authorization: `Bearer ${guess}` }, address: "192.0.2.66" }))
          .status,
      );
    }
    expect(statuses.slice(0, 60).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(60).every((s) => s === 429)).toBe(true);
    const last = await world.call("GET", "/v1/pets", { headers: { Authorization: "Bearer x" }, address: "192.0.2.66" });
    await errorBody(last, 429, "temporarily_banned");
  });

  it("believes X-Forwarded-For only from a trusted proxy", async () => {
    const proxied = await openWorld(kit, { trustProxy: ["10.0.0.0/8"] });
    const viaProxy = (client: string, address: string) =>
      proxied.call("GET", "/v1/pets", { address, headers: { "X-Forwarded-For": client } });
    await viaProxy("198.51.100.9", "10.1.2.3");
    const second = await viaProxy("198.51.100.9", "10.9.9.9");
    expect(second.headers.get("x-ratelimit-remaining")).toBe("58");
    const spoofed = await viaProxy("198.51.100.9", "203.0.113.50");
    expect(spoofed.headers.get("x-ratelimit-remaining")).toBe("59");
    await proxied.close();
  });
});
