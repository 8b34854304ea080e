import { memoryAdapters, memoryAdminTokens } from "@petstore/adapters/memory";
import { createPetstore, issueAdminToken, issueApiKey } from "@petstore/core";
import { describe, expect, it } from "vitest";
import { adminFetch } from "./admin-fetch.js";

const T0 = Date.UTC(2030, 0, 15, 12, 0, 10);

async function setUp() {
  const clock = { now: T0 };
  const adapters = memoryAdapters({ clock: () => clock.now });
  const adminTokens = memoryAdminTokens();
  const { token, record } = await issueAdminToken(adminTokens, { label: "ops" });
  const lines: Record<string, unknown>[] = [];
  const fetch = adminFetch({
    keys: adapters.keys,
    limiter: adapters.limiter,
    adminTokens,
    log: (line) => lines.push(JSON.parse(line)),
  });
  const call = (path: string, init: RequestInit = {}, address = "192.0.2.7") =>
    fetch(new Request(`http://127.0.0.1:9465${path}`, init), () => address);
  const withToken = (value: string) => ({ headers: { Authorization: `Bearer ${value}` } });
  return { clock, adapters, adminTokens, token, record, lines, call, withToken };
}

describe("the admin listener", () => {
  it("serves the operator's page and its files, self-contained and never cached", async () => {
    const { call } = await setUp();
    for (const [path, type] of [
      ["/", "text/html; charset=utf-8"],
      ["/page.js", "text/javascript; charset=utf-8"],
      ["/page.css", "text/css; charset=utf-8"],
    ] as const) {
      const response = await call(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type")).toBe(type);
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
      expect(response.headers.get("content-security-policy")).toContain("connect-src 'self'");
      expect((await response.text()).length).toBeGreaterThan(100);
    }
    expect((await call("/", { method: "POST" })).status).toBe(405);
    expect((await call("/nothing")).status).toBe(404);
  });

  it("serves the admin API to an admin token, auditing the change with the token's id and the client's address, and logs every call", async () => {
    const { call, withToken, token, record, adapters, lines } = await setUp();
    const created = await call("/admin/v1/keys", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ plan: "free", label: "shop" }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect((await call(`/admin/v1/keys/${id}`, withToken(token))).status).toBe(200);
    expect((await adapters.keys.auditTrail({ limit: 1 }))[0]).toMatchObject({
      action: "create",
      keyId: id,
      actor: { who: `admin:${record.id}`, from: "192.0.2.7" },
    });
    expect(lines.map((line) => [line.method, line.path, line.status, line.tokenId, line.admin])).toEqual([
      ["POST", "/admin/v1/keys", 201, record.id, true],
      ["GET", `/admin/v1/keys/${id}`, 200, record.id, true],
    ]);
    expect(JSON.stringify(lines)).not.toContain(token);
  });

  it("never takes an API key for an admin token, nor a revoked token", async () => {
    const { call, withToken, adapters, adminTokens, token, record } = await setUp();
    const { key } = await issueApiKey(adapters.keys, { plan: "enterprise", perMinute: 10, perDay: 10 });
    expect((await call("/admin/v1/keys", withToken(key))).status).toBe(401);
    await adminTokens.revoke(record.id);
    expect((await call("/admin/v1/keys", withToken(token))).status).toBe(401);
    // And the API never takes an admin token for a key.
    const petstore = createPetstore({ ...adapters });
    expect(
      (
        await petstore.fetch(new Request("http://petstore.test/v1/pets", withToken(token)), {
          clientAddress: "192.0.2.9",
        })
      ).status,
    ).toBe(401);
  });

  it("refuses an address after 10 failed credentials in a minute, a valid token too, while others go on", async () => {
    const { call, withToken, token, clock } = await setUp();
    for (let i = 0; i < 10; i++)
      expect((await call("/admin/v1/keys", withToken(`psa_${"x".repeat(44)}`))).status).toBe(401);
    const refused = await call("/admin/v1/keys", withToken(token));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBe(50);
    expect(((await refused.json()) as { code: string }).code).toBe("rate_limited");
    expect((await call("/admin/v1/keys", withToken(token), "192.0.2.8")).status).toBe(200);
    clock.now += 60_000;
    expect((await call("/admin/v1/keys", withToken(token))).status).toBe(200);
  });
});
