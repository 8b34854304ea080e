import { issueApiKey } from "@petstore/core";
import { beforeEach, describe, expect, it } from "vitest";
import { ADAPTER_KITS, beforeEachWorld, errorBody, type World } from "./harness.js";

const MINUTE = 60_000;
const PET = { name: "Rex", categoryId: 1 };
const CHALLENGE = (scope: string) => `Bearer error="insufficient_scope", scope="${scope}"`;

describe.each(ADAPTER_KITS)("scopes on $name", (kit) => {
  let world: World;
  let fullKey: string;
  let readOnly: { key: string; id: string };
  // Three a minute: the refusals' count against the key shows in its limit.
  beforeEachWorld(kit, { plans: { free: { perMinute: 3, perDay: 1000 } } }, (opened, key) => {
    [world, fullKey] = [opened, key];
  });
  beforeEach(async () => {
    const { key, record } = await issueApiKey(world.adapters.keys, {
      plan: "pro",
      scopes: ["pets:read", "orders:read"],
    });
    readOnly = { key, id: record.id };
  });

  it("lets a read-only key read pets and orders: 200", async () => {
    const { id } = await world.createPet(fullKey);
    for (const path of ["/v1/pets", `/v1/pets/${id}`, "/v1/store/orders"])
      expect((await world.call("GET", path, { key: readOnly.key })).status, path).toBe(200);
    expect((await world.call("HEAD", "/v1/pets", { key: readOnly.key })).status).toBe(200);
  });

  it("answers a read-only key's POST 403 insufficient_scope, the challenge naming pets:write, with the rate-limit headers, creating nothing", async () => {
    const response = await world.call("POST", "/v1/pets", { key: readOnly.key, body: PET });
    expect(response.headers.get("www-authenticate")).toBe(CHALLENGE("pets:write"));
    expect(response.headers.get("x-ratelimit-limit")).toBe("300");
    expect(response.headers.get("x-ratelimit-remaining")).toBe("299");
    expect(response.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/);
    expect(response.headers.get("ratelimit")).toMatch(/^"minute";r=299;t=\d+$/);
    await errorBody(response, 403, "insufficient_scope");
    expect(await (await world.call("GET", "/v1/pets", { key: fullKey })).json()).toEqual([]);
  });

  it("refuses before reading the body: an unsupported body is still 403", async () => {
    const response = await world.call("POST", "/v1/pets", {
      key: readOnly.key,
      raw: "name=Rex",
      headers: { "Content-Type": "text/plain" },
    });
    await errorBody(response, 403, "insufficient_scope");
  });

  it("answers a key without pets:read 403 on the pets, naming pets:read, and one without orders:read on the orders", async () => {
    const writer = await world.key({ plan: "pro", scopes: ["pets:write"] });
    for (const path of ["/v1/pets", "/v1/pets/1"]) {
      const response = await world.call("GET", path, { key: writer });
      expect(response.headers.get("www-authenticate"), path).toBe(CHALLENGE("pets:read"));
      await errorBody(response, 403, "insufficient_scope");
    }
    const orders = await world.call("GET", "/v1/store/orders", { key: writer });
    expect(orders.headers.get("www-authenticate")).toBe(CHALLENGE("orders:read"));
    expect((await world.call("POST", "/v1/pets", { key: writer, body: PET })).status).toBe(201);
  });

  it("answers 404 and 405 before the scope: a path or method with no operation needs none", async () => {
    await errorBody(await world.call("GET", "/v1/cats", { key: readOnly.key }), 404, "not_found");
    await errorBody(await world.call("DELETE", "/v1/pets", { key: readOnly.key }), 405, "method_not_allowed");
  });

  it("counts a refusal as the key's request: its limit runs out, then 429", async () => {
    const limited = await world.key({ plan: "free", scopes: ["orders:read"] });
    for (let i = 0; i < 3; i++) expect((await world.call("GET", "/v1/pets", { key: limited })).status).toBe(403);
    await errorBody(await world.call("GET", "/v1/store/orders", { key: limited }), 429, "rate_limited");
  });

  it("counts a refusal in the key's usage as admitted by its limits", async () => {
    await world.call("POST", "/v1/pets", { key: readOnly.key, body: PET });
    await world.petstore.flush();
    const [minute] = await world.adapters.keys.usage({
      keyId: readOnly.id,
      resolution: "minute",
      from: 0,
      to: world.clock.now + MINUTE,
    });
    expect(minute).toMatchObject({ admitted: 1, rateLimited: 0, banned: 0, unauthorized: 0 });
  });

  it("applies a change of scopes made elsewhere within 5 s, and one made through this server at once", async () => {
    expect((await world.call("GET", "/v1/pets", { key: readOnly.key })).status).toBe(200);
    await world.adapters.keys.update(readOnly.id, { scopes: ["orders:read"] }, { actor: { who: "test" } });
    expect((await world.call("GET", "/v1/pets", { key: readOnly.key })).status).toBe(200);
    world.clock.now += 5_000;
    expect((await world.call("GET", "/v1/pets", { key: readOnly.key })).status).toBe(403);
    await world.adapters.keys.update(readOnly.id, { scopes: null }, { actor: { who: "test" } });
    world.petstore.forgetKey(readOnly.id);
    expect((await world.call("POST", "/v1/pets", { key: readOnly.key, body: PET })).status).toBe(201);
  });
});
