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
  const changed: string[] = [];
  const fetch = adminFetch({
    keys: adapters.keys,
    limiter: adapters.limiter,
    idempotency: adapters.idempotency,
    adminTokens,
    onKeyChange: (id) => changed.push(id),
    allowHost: (host) => host === "127.0.0.1",
    log: (line) => lines.push(JSON.parse(line)),
  });
  const call = (path: string, init: RequestInit = {}, address = "192.0.2.7", origin = "http://127.0.0.1:9465") =>
    fetch(new Request(`${origin}${path}`, init), () => address);
  const withToken = (value: string) => ({ headers: { Authorization: `Bearer ${value}` } });
  return { clock, adapters, adminTokens, token, record, lines, changed, call, withToken };
}

describe("the admin listener", () => {
  it("serves the operator's page and its files, self-contained and never cached", async () => {
    const { call } = await setUp();
    for (const [path, type] of [
      ["/", "text/html; charset=utf-8"],
      ["/page.mjs", "text/javascript; charset=utf-8"],
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

  it("tells the API of this process of every key it changes", async () => {
    const { call, token, changed } = await setUp();
    const json = (method: string, body?: unknown) => ({
      method,
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const { id } = (await (await call("/admin/v1/keys", json("POST", { plan: "free" }))).json()) as { id: string };
    await call(`/admin/v1/keys/${id}`, json("PATCH", { plan: "pro" }));
    await call(`/admin/v1/keys/${id}/roll`, json("POST", { overlapSeconds: 0 }));
    await call(`/admin/v1/keys/${id}/revoke`, json("POST"));
    expect(changed).toEqual([id, id, id]);
  });

  it("says a wrong, revoked or API-key credential was refused, and a missing one is required", async () => {
    const { call, withToken, adapters, adminTokens, token, record } = await setUp();
    const message = async (response: Promise<Response>) => {
      const answer = await response;
      return [
        answer.status,
        ((await answer.json()) as { message: string }).message,
        answer.headers.get("www-authenticate"),
      ];
    };
    const refused = [401, "The admin token was refused", 'Bearer realm="petstore-admin", error="invalid_token"'];
    expect(await message(call("/admin/v1/keys"))).toEqual([
      401,
      "An admin credential is required",
      'Bearer realm="petstore-admin"',
    ]);
    const { key } = await issueApiKey(adapters.keys, { plan: "enterprise", perMinute: 10, perDay: 10 });
    expect(await message(call("/admin/v1/keys", withToken(key)))).toEqual(refused);
    expect(
      await message(call("/admin/v1/keys", withToken(`${token.slice(0, -1)}${token.endsWith("a") ? "b" : "a"}`))),
    ).toEqual(refused);
    await adminTokens.revoke(record.id);
    expect(await message(call("/admin/v1/keys", withToken(token)))).toEqual(refused);
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

  it("counts no request without a credential: a page's requests lock no one out", async () => {
    const { call, withToken, token } = await setUp();
    for (let i = 0; i < 35; i++) expect((await call("/admin/v1/keys")).status).toBe(401);
    expect((await call("/admin/v1/keys", withToken(token))).status).toBe(200);
  });

  it("refuses made-up tokens from an address after 10 in a minute, never a valid token from there", async () => {
    const { call, withToken, token, clock } = await setUp();
    for (let i = 0; i < 10; i++)
      expect((await call("/admin/v1/keys", withToken(`psa_${"x".repeat(44)}`))).status).toBe(401);
    const refused = await call("/admin/v1/keys", withToken(`psa_${"y".repeat(44)}`));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBe(50);
    expect(((await refused.json()) as { code: string }).code).toBe("rate_limited");
    expect((await call("/admin/v1/keys", withToken("garbage"))).status).toBe(429);
    expect((await call("/admin/v1/keys", withToken(token))).status).toBe(200);
    clock.now += 60_000;
    expect((await call("/admin/v1/keys", withToken(`psa_${"y".repeat(44)}`))).status).toBe(401);
  });

  it("refuses a token whose secret was guessed wrong 10 times from an address, there only", async () => {
    const { call, withToken, token, clock } = await setUp();
    const guess = `${token.slice(0, 16)}${"z".repeat(32)}`;
    for (let i = 0; i < 10; i++) expect((await call("/admin/v1/keys", withToken(guess))).status).toBe(401);
    expect((await call("/admin/v1/keys", withToken(token))).status).toBe(429);
    expect((await call("/admin/v1/keys", withToken(token), "192.0.2.8")).status).toBe(200);
    clock.now += 60_000;
    expect((await call("/admin/v1/keys", withToken(token))).status).toBe(200);
  });

  it("refuses before authentication another site's page and a host name it does not answer, its own page going on", async () => {
    const { call, withToken, token } = await setUp();
    expect((await call("/admin/v1/keys", { headers: { "Sec-Fetch-Site": "cross-site" } })).status).toBe(403);
    expect((await call("/", { headers: { "Sec-Fetch-Site": "cross-site" } })).status).toBe(403);
    const rebound = await call("/admin/v1/keys", withToken(token), "192.0.2.7", "http://evil.example:9465");
    expect(rebound.status).toBe(403);
    const own = await call("/admin/v1/keys", {
      headers: { Authorization: `Bearer ${token}`, "Sec-Fetch-Site": "same-origin", Origin: "http://127.0.0.1:9465" },
    });
    expect(own.status).toBe(200);
  });
});
