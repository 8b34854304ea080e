import { StorageUnavailableError } from "@petstore/core";
import { describe, expect, it, vi } from "vitest";
import { ADAPTER_KITS, beforeEachWorld, errorBody, openWorld, type World } from "./harness.js";

const COMMON = [
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "ratelimit",
  "ratelimit-policy",
  "x-request-id",
];

describe.each(ADAPTER_KITS)("headers and errors on $name", (kit) => {
  let world: World;
  let key: string;
  beforeEachWorld(kit, {}, (opened, freeKey) => ([world, key] = [opened, freeKey]));

  it.each([
    ["200", "GET", "/v1/pets", true],
    ["201", "POST", "/v1/pets", true],
    ["400", "GET", "/v1/pets?limit=0", true],
    ["401", "GET", "/v1/pets", false],
    ["404", "GET", "/v1/pets/77", true],
    ["404 for an unknown path", "GET", "/v1/cats", true],
    ["405", "PUT", "/v1/pets", true],
    ["openapi", "GET", "/v1/openapi.json", false],
  ] as const)(
    "puts the rate-limit, request-id and safety headers on a %s answer",
    async (_what, method, path, withKey) => {
      const response = await world.call(method, path, {
        ...(withKey ? { key } : {}),
        ...(method === "POST" ? { body: { name: "Rex", categoryId: 1 } } : {}),
      });
      for (const name of COMMON) expect(response.headers.get(name), name).not.toBeNull();
      expect(response.headers.get("content-type")).toBe("application/json");
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    },
  );

  it("puts the headers on a 429 too", async () => {
    const limited = await world.key({ plan: "free", perMinute: 1, perDay: 10 });
    await world.call("GET", "/v1/pets", { key: limited });
    const refused = await world.call("GET", "/v1/pets", { key: limited });
    expect(refused.status).toBe(429);
    for (const name of [...COMMON, "retry-after"]) expect(refused.headers.get(name), name).not.toBeNull();
    expect(refused.headers.get("cache-control")).toBe("no-store");
  });

  it("echoes a valid incoming X-Request-Id", async () => {
    const response = await world.call("GET", "/v1/pets", { key, headers: { "X-Request-Id": "req-123_abc" } });
    expect(response.headers.get("x-request-id")).toBe("req-123_abc");
  });

  it.each([
    ["longer than 128 characters", "r".repeat(129)],
    ["with a space", "two words"],
  ])("generates a request id when the incoming one is %s", async (_what, incoming) => {
    const response = await world.call("GET", "/v1/pets", { key, headers: { "X-Request-Id": incoming } });
    const id = response.headers.get("x-request-id");
    expect(id).not.toBe(incoming);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("generates a distinct request id per request", async () => {
    const a = (await world.call("GET", "/v1/pets", { key })).headers.get("x-request-id");
    const b = (await world.call("GET", "/v1/pets", { key })).headers.get("x-request-id");
    expect(a).not.toBe(b);
  });

  it("returns 404 not_found for an unknown path under the base path", async () => {
    await errorBody(await world.call("GET", "/v1/pets/1/toys", { key }), 404, "not_found");
    await errorBody(await world.call("GET", "/v1/store", { key }), 404, "not_found");
  });

  it.each([
    ["/v1/pets", ["DELETE", "PUT", "PATCH", "OPTIONS"], "GET, HEAD, POST"],
    ["/v1/pets/1", ["POST", "DELETE", "PUT"], "GET, HEAD"],
    ["/v1/store/orders", ["POST", "DELETE"], "GET, HEAD"],
  ])("returns 405 method_not_allowed with Allow on %s", async (path, methods, allow) => {
    for (const method of methods) {
      const response = await world.call(method, path, { key });
      expect(response.headers.get("allow")).toBe(allow);
      await errorBody(response, 405, "method_not_allowed");
    }
  });

  it("checks authentication before routing: an unknown path without a key is a 401", async () => {
    await errorBody(await world.call("GET", "/v1/cats"), 401, "unauthorized");
  });

  it("answers an unexpected failure with 500 internal_error, no internals in the body, and reports it with the request id", async () => {
    const onError = vi.fn();
    const failing = await openWorld(kit, { onError });
    const failingKey = await failing.key();
    failing.adapters.store.listPets = async () => {
      throw new Error("SQLITE_CORRUPT: SELECT * FROM pets at /srv/db.ts:42");
    };
    const response = await failing.call("GET", "/v1/pets", {
      key: failingKey,
      headers: { "X-Request-Id": "trace-me" },
    });
    const text = await response.clone().text();
    expect(text).not.toMatch(/SQLITE|SELECT|db\.ts/);
    await errorBody(response, 500, "internal_error");
    expect(response.headers.get("x-ratelimit-limit")).toBe("60");
    expect(onError).toHaveBeenCalledWith(
      expect.objectContaining({ message: expect.stringContaining("SQLITE_CORRUPT") }),
      "trace-me",
    );
    await failing.close();
  });

  it("answers 503 service_unavailable with Retry-After when storage is unavailable", async () => {
    world.adapters.store.createPet = async () => {
      throw new StorageUnavailableError("database is locked");
    };
    const response = await world.call("POST", "/v1/pets", { key, body: { name: "Rex", categoryId: 1 } });
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const body = await errorBody(response, 503, "service_unavailable");
    expect(body.message).not.toContain("locked");
  });

  it("answers 503 when the limiter's storage is unavailable, with the caller's limit, nothing remaining and a reset after Retry-After", async () => {
    world.adapters.limiter.hit = async () => {
      throw new StorageUnavailableError();
    };
    const limited = await world.key({ plan: "pro" });
    const response = await world.call("GET", "/v1/pets", { key: limited });
    await errorBody(response, 503, "service_unavailable");
    const retryAfter = Number(response.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(response.headers.get("x-ratelimit-limit")).toBe("300");
    expect(response.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(response.headers.get("x-ratelimit-reset"))).toBeGreaterThanOrEqual(
      Math.ceil(world.clock.now / 1000) + retryAfter,
    );
    expect(response.headers.get("ratelimit")).toBe(`"minute";r=0;t=${retryAfter}`);
    expect(response.headers.get("ratelimit-policy")).toBe('"minute";q=300;w=60, "day";q=10000;w=86400');
  });

  it("answers 503 when the key lookup's storage is unavailable, with the anonymous bucket's limit", async () => {
    world.adapters.keys.findByHash = async () => {
      throw new StorageUnavailableError();
    };
    const response = await world.call("GET", "/v1/pets", { key });
    await errorBody(response, 503, "service_unavailable");
    expect(response.headers.get("x-ratelimit-limit")).toBe("60");
    expect(response.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(response.headers.get("x-ratelimit-reset"))).toBeGreaterThan(world.clock.now / 1000);
  });

  it("reports every answer to onResponse with its request id and, for an authenticated caller, the key's id only", async () => {
    const events: { requestId: string; keyId?: string; status: number }[] = [];
    const observed = await openWorld(kit, {
      onResponse: ({ response, requestId, keyId }) =>
        events.push({ requestId, status: response.status, ...(keyId ? { keyId } : {}) }),
    });
    const observedKey = await observed.key();
    const [record] = await observed.adapters.keys.list();
    await observed.call("GET", "/v1/pets", { key: observedKey, headers: { "X-Request-Id": "one" } });
    await observed.call("GET", "/v1/pets", { headers: { "X-Request-Id": "two" } });
    expect(events).toEqual([
      { requestId: "one", status: 200, keyId: record!.id },
      { requestId: "two", status: 401 },
    ]);
    expect(JSON.stringify(events)).not.toContain("psk_");
    await observed.close();
  });

  it("tells onResponse the route template, plan, error code, key cache outcome and the refusal that began a ban", async () => {
    const events: Record<string, unknown>[] = [];
    const observed = await openWorld(kit, {
      ban: { threshold: 2, seconds: 60 },
      onResponse: ({ response, route, plan, errorCode, keyCache, banStarted }) =>
        events.push({ status: response.status, route, plan, errorCode, keyCache, banStarted }),
    });
    const proKey = await observed.key({ plan: "pro", perMinute: 1, perDay: 100 });
    await observed.call("GET", "/v1/pets/12", { key: proKey });
    for (let i = 0; i < 4; i++) await observed.call("GET", "/v1/pets", { key: proKey });
    await observed.call("GET", "/v1/cats", { key: `${proKey.slice(0, -1)}${proKey.endsWith("x") ? "y" : "x"}` });
    await observed.call("GET", "/v1/openapi.json");
    const none = {
      route: undefined,
      plan: undefined,
      errorCode: undefined,
      keyCache: undefined,
      banStarted: undefined,
    };
    expect(events).toEqual([
      { ...none, status: 404, route: "/pets/:petId", plan: "pro", errorCode: "not_found", keyCache: "miss" },
      { ...none, status: 429, route: "/pets", plan: "pro", errorCode: "rate_limited", keyCache: "hit" },
      { ...none, status: 429, route: "/pets", plan: "pro", errorCode: "rate_limited", keyCache: "hit" },
      {
        ...none,
        status: 429,
        route: "/pets",
        plan: "pro",
        errorCode: "temporarily_banned",
        keyCache: "hit",
        banStarted: true,
      },
      { ...none, status: 429, route: "/pets", plan: "pro", errorCode: "temporarily_banned", keyCache: "hit" },
      // A mistyped key fails its checksum: refused without asking storage, so no cache outcome.
      { ...none, status: 401, errorCode: "unauthorized" },
      { ...none, status: 200, route: "/openapi.json" },
    ]);
    await observed.close();
  });

  it("serves under a configured base path", async () => {
    const mounted = await openWorld(kit, { basePath: "/api/petstore/" });
    const mountedKey = await mounted.key();
    const created = await mounted.call("POST", "/api/petstore/pets", {
      key: mountedKey,
      body: { name: "Rex", categoryId: 1 },
    });
    expect(created.headers.get("location")).toBe("/api/petstore/pets/1");
    const got = await mounted.call("GET", "/api/petstore/pets/1", { key: mountedKey });
    expect(got.headers.get("link")).toBe('</api/petstore/pets>; rel="successor-version"');
    expect((await mounted.call("GET", "/v1/pets", { key: mountedKey })).status).toBe(404);
    await mounted.close();
  });
});
