import SwaggerParser from "@apidevtools/swagger-parser";
import { memoryAdapters } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import { createPetstore } from "../app.js";
import type { Actor } from "../ports.js";
import { createAdmin } from "./create-admin.js";

const T0 = Date.UTC(2030, 0, 15, 12, 0, 10);
const ADMIN: Actor = { who: "admin:tok_test", from: "192.0.2.50" };
const TOKEN = "Bearer admin-test-token";

/** The API and its admin API on one set of memory adapters, on a clock the test moves. */
function setUp() {
  const clock = { now: T0 };
  const adapters = memoryAdapters({ clock: () => clock.now });
  const petstore = createPetstore({ ...adapters, keyCacheMs: 0 });
  const admin = createAdmin({
    keys: adapters.keys,
    limiter: adapters.limiter,
    clock: () => clock.now,
    // The host's own authentication: here one fixed token.
    authenticate: (request, info) =>
      request.headers.get("authorization") === TOKEN
        ? { who: ADMIN.who, ...(info?.clientAddress && { from: info.clientAddress }) }
        : undefined,
  });
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    admin.fetch(
      new Request(`http://admin.test/admin/v1${path}`, {
        method,
        headers: {
          Authorization: TOKEN,
          ...(body !== undefined && { "Content-Type": "application/json" }),
          ...headers,
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      }),
      { clientAddress: "192.0.2.50" },
    );
  const api = (key: string) =>
    petstore.fetch(
      new Request("http://petstore.test/v1/pets?limit=1", { headers: { Authorization: `Bearer ${key}` } }),
      { clientAddress: "203.0.113.9" },
    );
  const create = async (body: unknown = { plan: "free", label: "shop" }) =>
    (await (await call("POST", "/keys", body)).json()) as { id: string; key: string };
  return { clock, adapters, admin, call, api, create };
}

const json = async <T = Record<string, unknown>>(response: Response) => (await response.json()) as T;

describe("createAdmin", () => {
  it("answers 401 with a Bearer challenge without the host's credential, never cached, with a request id", async () => {
    const { admin } = setUp();
    const response = await admin.fetch(new Request("http://admin.test/admin/v1/keys"));
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="petstore-admin"');
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("x-request-id")).not.toBeNull();
    expect(await json(response)).toMatchObject({ code: "unauthorized", status: 401 });
  });

  it("creates a key shown once, which the API accepts at once, and audits who made it from where", async () => {
    const { call, api, adapters } = setUp();
    const response = await call("POST", "/keys", { plan: "pro", label: "Acme", expiresAt: "2031-01-01T00:00:00Z" });
    expect(response.status).toBe(201);
    const created = await json<{ id: string; key: string }>(response);
    expect(response.headers.get("location")).toBe(`/admin/v1/keys/${created.id}`);
    expect(created).toMatchObject({
      plan: "pro",
      perMinute: 300,
      perDay: 10_000,
      label: "Acme",
      expiresAt: "2031-01-01T00:00:00.000Z",
      revokedAt: null,
      rolling: null,
    });
    expect(created.key).toMatch(/^psk_/);
    expect((await api(created.key)).status).toBe(200);
    const [entry] = await adapters.keys.auditTrail({ limit: 1 });
    expect(entry).toMatchObject({ action: "create", keyId: created.id, actor: ADMIN, at: T0 });
    expect((await json(await call("GET", `/keys/${created.id}`))).key).toBeUndefined();
  });

  it("refuses a bad new key with every problem: enterprise without limits, an expiry in the past, an unknown field, a wrong type", async () => {
    const { call } = setUp();
    const response = await call("POST", "/keys", {
      plan: "enterprise",
      expiresAt: "2029-01-01T00:00:00Z",
      color: "red",
    });
    expect(response.status).toBe(400);
    const body = await json<{ code: string; details: { path: string; message: string }[] }>(response);
    expect(body.code).toBe("invalid_body");
    expect(body.details.map((detail) => detail.path).sort()).toEqual(["color"]);
    const second = await json<{ details: { path: string }[] }>(
      await call("POST", "/keys", { plan: "enterprise", expiresAt: "2029-01-01T00:00:00Z" }),
    );
    expect(second.details.map((detail) => detail.path).sort()).toEqual(["expiresAt", "perDay", "perMinute"]);
    const third = await json<{ details: { path: string; message: string }[] }>(
      await call("POST", "/keys", { plan: "gold", perMinute: 0, label: 7 }),
    );
    expect(third.details).toEqual([
      { path: "plan", message: "must be one of free, pro, business, enterprise" },
      { path: "perMinute", message: "must be at least 1" },
      { path: "label", message: "must be a string" },
    ]);
    const moved = await json<{ details: { path: string; message: string }[] }>(
      await call("POST", "/keys", { plan: "free", expiresAt: "2031-02-30T00:00:00Z" }),
    );
    expect(moved.details).toEqual([{ path: "expiresAt", message: "must be a date and time that exists" }]);
    expect((await call("POST", "/keys", "not json", { "Content-Type": "text/plain" })).status).toBe(415);
  });

  it("answers a retried create with the same Idempotency-Key as the first, without the secret, and 422 for another body", async () => {
    const { call, adapters } = setUp();
    const first = await call("POST", "/keys", { plan: "free", label: "retry" }, { "Idempotency-Key": "signup-42" });
    const created = await json<{ id: string; key: string }>(first);
    // The same body with its fields in another order is the same request.
    const again = await call("POST", "/keys", { label: "retry", plan: "free" }, { "Idempotency-Key": "signup-42" });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await json(again)).toMatchObject({ id: created.id, key: null, label: "retry" });
    expect(await adapters.keys.list()).toHaveLength(1);
    const other = await call("POST", "/keys", { plan: "pro", label: "retry" }, { "Idempotency-Key": "signup-42" });
    expect(other.status).toBe(422);
    expect((await json(other)).code).toBe("idempotency_key_reused");
  });

  it("lists keys a page at a time with a Link to the next, and finds them by id or label", async () => {
    const { call, create } = setUp();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await create({ plan: "free", label: i % 2 === 0 ? `Shop ${i}` : `other ${i}` })).id);
    const first = await call("GET", "/keys?limit=2");
    expect((await json<{ id: string }[]>(first)).map((key) => key.id)).toEqual(ids.slice(0, 2));
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get("link")!)![1]!;
    const second = await call("GET", next.replace("/admin/v1", ""));
    expect((await json<{ id: string }[]>(second)).map((key) => key.id)).toEqual(ids.slice(2, 4));
    const shops = await call("GET", "/keys?q=SHOP&limit=2");
    expect((await json<{ label: string }[]>(shops)).map((key) => key.label)).toEqual(["Shop 0", "Shop 2"]);
    const rest = /^<([^>]+)>; rel="next"$/.exec(shops.headers.get("link")!)![1]!;
    expect(
      (await json<{ label: string }[]>(await call("GET", rest.replace("/admin/v1", "")))).map((key) => key.label),
    ).toEqual(["Shop 4"]);
    expect((await call("GET", "/keys?limit=0")).status).toBe(400);
    expect((await call("GET", "/keys?cursor=%%%")).status).toBe(400);
  });

  it("shows a key's usage this minute and today, from the limiter", async () => {
    const { call, api, create } = setUp();
    const { id, key } = await create();
    for (let i = 0; i < 3; i++) await api(key);
    const view = await json(await call("GET", `/keys/${id}`));
    expect(view.usage).toEqual({
      minute: { used: 3, limit: 60, resetAt: new Date(Date.UTC(2030, 0, 15, 12, 1)).toISOString() },
      day: { used: 3, limit: 1_000, resetAt: new Date(Date.UTC(2030, 0, 16)).toISOString() },
      bannedUntil: null,
    });
  });

  it("upgrades a key keeping its secret and its usage; refuses a change to a revoked key with 409 and an unknown one with 404", async () => {
    const { call, api, create } = setUp();
    const { id, key } = await create();
    await api(key);
    const upgraded = await call("PATCH", `/keys/${id}`, { plan: "pro", label: null });
    expect(await json(upgraded)).toMatchObject({
      plan: "pro",
      perMinute: 300,
      label: null,
      usage: { minute: { used: 1, limit: 300 } },
    });
    expect((await api(key)).headers.get("x-ratelimit-limit")).toBe("300");
    expect((await call("PATCH", "/keys/key_missing", { plan: "pro" })).status).toBe(404);
    expect((await call("PATCH", `/keys/${id}`, { expiresAt: "2020-01-01T00:00:00Z" })).status).toBe(400);
    await call("POST", `/keys/${id}/revoke`);
    const refused = await call("PATCH", `/keys/${id}`, { plan: "business" });
    expect(refused.status).toBe(409);
    expect((await json(refused)).code).toBe("key_revoked");
  });

  it("rolls a key: a new secret at once, the old one for the overlap; one roll at a time; a retry answered again without the secret", async () => {
    const { call, api, create, clock } = setUp();
    const { id, key: old } = await create();
    const response = await call("POST", `/keys/${id}/roll`, { overlapSeconds: 60 }, { "Idempotency-Key": "roll-1" });
    expect(response.status).toBe(200);
    const rolled = await json<{ key: string; rolling: { since: string; until: string } }>(response);
    expect(rolled.rolling).toEqual({ since: new Date(T0).toISOString(), until: new Date(T0 + 60_000).toISOString() });
    expect((await api(rolled.key)).status).toBe(200);
    const during = await api(old);
    expect(during.status).toBe(200);
    expect(during.headers.get("sunset")).toBe(new Date(T0 + 60_000).toUTCString());
    const replay = await call("POST", `/keys/${id}/roll`, { overlapSeconds: 60 }, { "Idempotency-Key": "roll-1" });
    expect([replay.status, replay.headers.get("idempotent-replayed"), (await json(replay)).key]).toEqual([
      200,
      "true",
      null,
    ]);
    const second = await call("POST", `/keys/${id}/roll`, { overlapSeconds: 0 }, { "Idempotency-Key": "roll-2" });
    expect([second.status, (await json(second)).code]).toEqual([409, "roll_in_progress"]);
    expect(
      (await call("POST", `/keys/${id}/roll`, { overlapSeconds: 60 }, { "Idempotency-Key": "roll-1" })).status,
    ).toBe(200);
    expect(
      (await call("POST", `/keys/${id}/roll`, { overlapSeconds: 61 }, { "Idempotency-Key": "roll-1" })).status,
    ).toBe(422);
    expect((await call("POST", `/keys/${id}/roll`, { overlapSeconds: 604_801 })).status).toBe(400);
    clock.now = T0 + 60_000;
    expect((await api(old)).status).toBe(401);
  });

  it("revokes a key (again: the key as it is), and lifts a ban so the key's next request is decided by its limits", async () => {
    const { call, api, create, clock } = setUp();
    const { id, key } = await create();
    for (let i = 0; i < 60 + 31; i++) await api(key);
    expect((await json(await api(key))).code).toBe("temporarily_banned");
    const view = await json<{ usage: { bannedUntil: string } }>(await call("GET", `/keys/${id}`));
    expect(view.usage.bannedUntil).not.toBeNull();
    const lifted = await call("POST", `/keys/${id}/unban`);
    expect(await json(lifted)).toMatchObject({ unbanned: true, usage: { bannedUntil: null } });
    expect((await json(await api(key))).code).toBe("rate_limited");
    clock.now = T0 + 60_000;
    expect((await api(key)).status).toBe(200);
    expect(await json(await call("POST", `/keys/${id}/unban`))).toMatchObject({ unbanned: false });
    const revoked = await json<{ revokedAt: string }>(await call("POST", `/keys/${id}/revoke`));
    expect(revoked.revokedAt).toBe(new Date(T0 + 60_000).toISOString());
    clock.now += 1_000;
    expect((await json(await call("POST", `/keys/${id}/revoke`))).revokedAt).toBe(revoked.revokedAt);
    expect((await api(key)).status).toBe(401);
  });

  it("lists the audit trail newest first, a page at a time, of one key or all", async () => {
    const { call, create } = setUp();
    const { id } = await create();
    const { id: other } = await create();
    await call("PATCH", `/keys/${id}`, { label: "Renamed" });
    await call("POST", `/keys/${id}/revoke`);
    const all = await json<{ action: string; keyId: string; actor: Actor; at: string }[]>(await call("GET", "/audit"));
    expect(all.map((entry) => [entry.action, entry.keyId])).toEqual([
      ["revoke", id],
      ["update", id],
      ["create", other],
      ["create", id],
    ]);
    expect(all[0]!.actor).toEqual(ADMIN);
    expect(all[0]!.at).toBe(new Date(T0).toISOString());
    const first = await call("GET", `/audit?keyId=${id}&limit=2`);
    expect((await json<{ action: string }[]>(first)).map((entry) => entry.action)).toEqual(["revoke", "update"]);
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get("link")!)![1]!;
    expect(
      (await json<{ action: string }[]>(await call("GET", next.replace("/admin/v1", "")))).map((entry) => entry.action),
    ).toEqual(["create"]);
  });

  it("answers 404 elsewhere, 405 with Allow for another method, HEAD as GET without a body", async () => {
    const { call } = setUp();
    expect((await call("GET", "/nothing")).status).toBe(404);
    const wrong = await call("DELETE", "/keys");
    expect([wrong.status, wrong.headers.get("allow")]).toEqual([405, "GET, POST, HEAD"]);
    const head = await call("HEAD", "/keys");
    expect([head.status, await head.text()]).toEqual([200, ""]);
  });

  it("serves an OpenAPI 3.1 document of itself that a validator accepts, without a credential", async () => {
    const { admin } = setUp();
    const response = await admin.fetch(new Request("http://admin.test/admin/v1/openapi.json"));
    expect(response.status).toBe(200);
    const document = await json(response);
    await SwaggerParser.validate(structuredClone(document) as never);
    expect(Object.keys(document.paths as object)).toEqual([
      "/keys",
      "/keys/{id}",
      "/keys/{id}/roll",
      "/keys/{id}/revoke",
      "/keys/{id}/unban",
      "/keys/{id}/usage",
      "/usage/top",
      "/audit",
      "/openapi.json",
    ]);
  });
});
