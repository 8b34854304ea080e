import { describe, expect, it } from "vitest";
import { ADAPTER_KITS, beforeEachWorld, errorBody, ROOMY_LIMITS, type World } from "./harness.js";

describe.each(ADAPTER_KITS)("listPets on $name", (kit) => {
  let world: World;
  let key: string;
  beforeEachWorld(kit, ROOMY_LIMITS, (opened, freeKey) => ([world, key] = [opened, freeKey]));

  async function seed(count: number, status?: (i: number) => string | undefined) {
    for (let i = 0; i < count; i++) {
      const s = status?.(i);
      await world.createPet(key, { name: `pet ${i}`, categoryId: 1 + (i % 3), ...(s ? { status: s } : {}) });
    }
  }

  it("returns a bare JSON array of pets ordered by id", async () => {
    await seed(3, (i) => ["sold", undefined, "available"][i]);
    const response = await world.call("GET", "/v1/pets", { key });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual([
      { id: 1, name: "pet 0", categoryId: 1, status: "sold" },
      { id: 2, name: "pet 1", categoryId: 2 },
      { id: 3, name: "pet 2", categoryId: 3, status: "available" },
    ]);
  });

  it("returns an empty array when there are no pets", async () => {
    const response = await world.call("GET", "/v1/pets", { key });
    expect(await response.json()).toEqual([]);
    expect(response.headers.get("link")).toBeNull();
  });

  it("returns at most 20 pets when limit is omitted", async () => {
    await seed(25);
    const pets = (await (await world.call("GET", "/v1/pets", { key })).json()) as unknown[];
    expect(pets).toHaveLength(20);
  });

  it.each([1, 7, 100])("returns at most limit=%i pets", async (limit) => {
    await seed(8);
    const pets = (await (await world.call("GET", `/v1/pets?limit=${limit}`, { key })).json()) as unknown[];
    expect(pets).toHaveLength(Math.min(limit, 8));
  });

  it.each([
    ["101", "limit"],
    ["0", "limit"],
    ["-1", "limit"],
    ["abc", "limit"],
    ["1.5", "limit"],
    ["1e2", "limit"],
    ["", "limit"],
    ["99999999999999999999", "limit"],
  ])("returns 400 invalid_parameter when limit is '%s'", async (value, name) => {
    const body = await errorBody(await world.call("GET", `/v1/pets?limit=${value}`, { key }), 400, "invalid_parameter");
    expect(body.message).toContain(name);
    expect(body.details).toEqual([{ path: name, message: expect.any(String) }]);
  });

  it("returns 400 when limit is repeated", async () => {
    const body = await errorBody(
      await world.call("GET", "/v1/pets?limit=5&limit=5", { key }),
      400,
      "invalid_parameter",
    );
    expect(body.message).toContain("limit");
  });

  it("returns only pets of the given status", async () => {
    await seed(9, (i) => ["available", "pending", "sold"][i % 3]);
    for (const status of ["available", "pending", "sold"]) {
      const pets = (await (await world.call("GET", `/v1/pets?status=${status}`, { key })).json()) as {
        status: string;
      }[];
      expect(pets).toHaveLength(3);
      expect(pets.every((p) => p.status === status)).toBe(true);
    }
  });

  it.each(["unknown", "", "SOLD", "sold,pending"])(
    "returns 400 invalid_parameter when status is '%s'",
    async (status) => {
      const body = await errorBody(
        await world.call("GET", `/v1/pets?status=${encodeURIComponent(status)}`, { key }),
        400,
        "invalid_parameter",
      );
      expect(body.message).toContain("status");
    },
  );

  it("lists every query problem in details, the first one named in the message", async () => {
    const body = await errorBody(
      await world.call("GET", "/v1/pets?limit=abc&status=dead&cursor=x&cursor=y", { key }),
      400,
      "invalid_parameter",
    );
    expect(body.message).toMatch(/^Query parameter 'limit' .*; 2 more in details$/);
    expect(body.details).toEqual([
      { path: "limit", message: "must be an integer from 1 to 100 (got 'abc')" },
      { path: "status", message: "must be one of available, pending, sold (got 'dead')" },
      { path: "cursor", message: "must not be repeated" },
    ]);
  });

  it("ignores unknown query parameters", async () => {
    await seed(2);
    const response = await world.call("GET", "/v1/pets?foo=bar&page=3", { key });
    expect(response.status).toBe(200);
    expect(await response.json()).toHaveLength(2);
  });

  it("announces the next page in a Link header that keeps limit and status, and none on the last page", async () => {
    await seed(7, (i) => (i % 2 === 0 ? "available" : "sold"));
    const first = await world.call("GET", "/v1/pets?limit=2&status=available", { key });
    const link = first.headers.get("link");
    expect(link).toMatch(/^<\/v1\/pets\?limit=2&status=available&cursor=[A-Za-z0-9_-]+>; rel="next"$/);
    expect(((await first.json()) as { id: number }[]).map((p) => p.id)).toEqual([1, 3]);
    const next = link!.slice(1, link!.indexOf(">"));
    const second = await world.call("GET", next, { key });
    expect(((await second.json()) as { id: number }[]).map((p) => p.id)).toEqual([5, 7]);
    expect(second.headers.get("link")).toBeNull();
  });

  it("walks every pet exactly once by following Link headers", async () => {
    await seed(23);
    const seen: number[] = [];
    let path: string | undefined = "/v1/pets?limit=5";
    while (path) {
      const response = await world.call("GET", path, { key });
      seen.push(...((await response.json()) as { id: number }[]).map((p) => p.id));
      const link = response.headers.get("link");
      path = link ? link.slice(1, link.indexOf(">")) : undefined;
    }
    expect(seen).toEqual(Array.from({ length: 23 }, (_, i) => i + 1));
  });

  it("does not announce a next page when the last page is exactly full", async () => {
    await seed(4);
    const response = await world.call("GET", "/v1/pets?limit=4", { key });
    expect(await response.json()).toHaveLength(4);
    expect(response.headers.get("link")).toBeNull();
  });

  it.each(["garbage", "YWZ0ZXI6MA", "YWZ0ZXI6LTE", "%00", "YWZ0ZXI6YWJj"])(
    "returns 400 invalid_parameter for cursor '%s'",
    async (cursor) => {
      const body = await errorBody(
        await world.call("GET", `/v1/pets?cursor=${cursor}`, { key }),
        400,
        "invalid_parameter",
      );
      expect(body.message).toContain("cursor");
    },
  );

  it("answers HEAD with the GET headers and no body", async () => {
    await seed(3);
    const response = await world.call("HEAD", "/v1/pets?limit=2", { key });
    expect(response.status).toBe(200);
    expect(response.headers.get("link")).toContain('rel="next"');
    expect(response.headers.get("x-ratelimit-limit")).toBe("1000");
    expect(await response.text()).toBe("");
    // RFC 9110 section 9.3.2: the length GET would send, not 0.
    const get = await world.call("GET", "/v1/pets?limit=2", { key });
    expect(response.headers.get("content-length")).toBe(String((await get.arrayBuffer()).byteLength));
  });
});
