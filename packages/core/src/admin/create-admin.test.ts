import SwaggerParser from "@apidevtools/swagger-parser";
import { memoryAdapters, memoryAdminTokens } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import { ownAccountId } from "../keys/bucket.js";
import type { Actor, IdempotencyClaim } from "../ports.js";
import { ADMIN, adminWorld, T0, TOKEN } from "../../../../test/_support/admin-world.js";
import { type AdminOptions, createAdmin } from "./create-admin.js";
import { adminTokenId, verifyAdminToken } from "./tokens.js";

/** The admin world with `options` given to createAdmin, and a key made through the admin API. */
function setUp(options: Partial<AdminOptions> = {}) {
  const world = adminWorld({ admin: options });
  const create = async (body: unknown = { plan: "free", label: "shop" }) =>
    (await (await world.call("POST", "/keys", body)).json()) as { id: string; key: string };
  return { ...world, create };
}

const withoutToken = ({ token: _, ...view }: { token?: unknown }) => view;
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
    // Each key's account, made for it, is created (and audited) with it.
    expect(all.map((entry) => [entry.action, entry.keyId])).toEqual([
      ["revoke", id],
      ["update", id],
      ["create", other],
      ["create", ownAccountId(other)],
      ["create", id],
      ["create", ownAccountId(id)],
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

  it("lists the trail of one action, of one actor, a page at a time keeping both, and refuses an action it does not know", async () => {
    const { call, create, adapters } = setUp();
    const { id } = await create();
    const { id: other } = await create();
    await adapters.keys.update(id, { label: "by hand" }, { actor: { who: "cli:ops@vm1" } });
    await call("PATCH", `/keys/${other}`, { label: "Renamed" });
    await call("PATCH", `/keys/${id}`, { label: "Again" });
    const shown = async (query: string) =>
      (await json<{ action: string; keyId: string }[]>(await call("GET", `/audit?${query}`))).map(
        (entry) => `${entry.action} ${entry.keyId}`,
      );
    expect(await shown("action=create")).toEqual([
      `create ${other}`,
      `create ${ownAccountId(other)}`,
      `create ${id}`,
      `create ${ownAccountId(id)}`,
    ]);
    expect(await shown("actor=cli%3Aops%40vm1")).toEqual([`update ${id}`]);
    const first = await call("GET", `/audit?action=update&actor=${encodeURIComponent(ADMIN.who)}&limit=1`);
    expect((await json<{ keyId: string }[]>(first)).map((entry) => entry.keyId)).toEqual([id]);
    const next = /^<\/admin\/v1([^>]+)>; rel="next"$/.exec(first.headers.get("link")!)![1]!;
    expect(await shown(next.slice("/audit?".length))).toEqual([`update ${other}`]);
    const unknown = await call("GET", "/audit?action=delete");
    expect(unknown.status).toBe(400);
    expect((await json<{ details: unknown }>(unknown)).details).toEqual([
      { path: "action", message: "must be one of create, update, roll, revoke, unban" },
    ]);
  });

  it("lists, creates (shown once, audited under its id) and revokes admin tokens", async () => {
    const tokens = memoryAdminTokens({ clock: () => T0 });
    const { call, adapters } = setUp({ tokens });
    const response = await call("POST", "/tokens", { label: "ops laptop" });
    expect(response.status).toBe(201);
    const created = await json<{ id: string; token: string }>(response);
    expect(created).toEqual({
      id: adminTokenId(created.token),
      label: "ops laptop",
      createdAt: new Date(T0).toISOString(),
      revokedAt: null,
      token: expect.stringMatching(/^psa_/),
    });
    expect(response.headers.get("location")).toBe(`/admin/v1/tokens/${created.id}`);
    expect(await verifyAdminToken(tokens, created.token)).toBeDefined();
    expect(await json(await call("GET", "/tokens"))).toEqual([withoutToken(created)]);
    const revoked = await call("POST", `/tokens/${created.id}/revoke`);
    expect(await json(revoked)).toMatchObject({ id: created.id, revokedAt: new Date(T0).toISOString() });
    expect(await verifyAdminToken(tokens, created.token)).toBeUndefined();
    expect((await call("POST", "/tokens/tok_nobody/revoke")).status).toBe(404);
    const trail = await adapters.keys.auditTrail({ limit: 10, keyId: created.id });
    expect(trail.map((entry) => [entry.action, entry.actor, entry.details])).toEqual([
      ["revoke", ADMIN, { adminToken: true }],
      ["create", ADMIN, { adminToken: true, label: "ops laptop" }],
    ]);
    expect(JSON.stringify(trail)).not.toContain(created.token);
  });

  it("answers a token create retried with the same Idempotency-Key as the first, without the token; 422 for another label", async () => {
    const { call } = setUp({ tokens: memoryAdminTokens({ clock: () => T0 }) });
    const headers = { "Idempotency-Key": "laptop-1" };
    const first = await json<{ id: string; token: string }>(await call("POST", "/tokens", { label: "a" }, headers));
    const again = await call("POST", "/tokens", { label: "a" }, headers);
    expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([201, "true"]);
    expect(await json(again)).toEqual({ ...withoutToken(first), token: null });
    expect((await call("POST", "/tokens", { label: "b" }, headers)).status).toBe(422);
    expect(await json<unknown[]>(await call("GET", "/tokens"))).toHaveLength(1);
  });

  it("refuses a token label an operator's screen would show wrong, and answers 404 under /tokens when the host keeps none", async () => {
    const { call } = setUp({ tokens: memoryAdminTokens() });
    const refused = await call("POST", "/tokens", { label: "a\u202Eb" });
    expect(refused.status).toBe(400);
    expect((await json<{ details: { path: string }[] }>(refused)).details.map((detail) => detail.path)).toEqual([
      "label",
    ]);
    const { call: without } = setUp();
    const missing = await without("GET", "/tokens");
    expect([missing.status, (await json(missing)).message]).toEqual([
      404,
      "This admin API manages no admin tokens (createAdmin was given none)",
    ]);
  });

  it("answers 404 elsewhere, 405 with Allow (sorted, as the API's) for another method, HEAD as GET without a body", async () => {
    const { call } = setUp();
    expect((await call("GET", "/nothing")).status).toBe(404);
    const wrong = await call("DELETE", "/keys");
    expect([wrong.status, wrong.headers.get("allow")]).toEqual([405, "GET, HEAD, POST"]);
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
      "/accounts",
      "/accounts/{id}",
      "/accounts/{id}/usage",
      "/usage/top",
      "/audit",
      "/tokens",
      "/tokens/{id}/revoke",
      "/openapi.json",
    ]);
  });

  it("refuses a change to an enterprise plan without limits of the key's own, as a create", async () => {
    const { call, create, adapters } = setUp();
    const { id } = await create();
    const response = await call("PATCH", `/keys/${id}`, { plan: "enterprise" });
    expect(response.status).toBe(400);
    expect(await json(response)).toMatchObject({
      code: "invalid_body",
      details: [
        { path: "perMinute", message: "is required for an enterprise key (its limits are its own, not a plan's)" },
        { path: "perDay", message: "is required for an enterprise key (its limits are its own, not a plan's)" },
      ],
    });
    expect((await adapters.keys.get(id))!.plan).toBe("free");
    const agreed = await call("PATCH", `/keys/${id}`, { plan: "enterprise", perMinute: 5_000, perDay: 90_000 });
    expect(await json(agreed)).toMatchObject({ plan: "enterprise", perMinute: 5_000, perDay: 90_000 });
    // Its own limits are kept: a later change of label alone needs none again.
    expect((await call("PATCH", `/keys/${id}`, { label: "big" })).status).toBe(200);
    expect((await call("PATCH", `/keys/${id}`, { perMinute: null })).status).toBe(400);
  });

  it("answers a roll with no overlap asked twice with the same Idempotency-Key once, then 422 for another body", async () => {
    const { call, create, adapters } = setUp();
    const { id } = await create();
    const roll = (overlapSeconds: number) =>
      call("POST", `/keys/${id}/roll`, { overlapSeconds }, { "Idempotency-Key": "leak-7" });
    const first = await json<{ key: string }>(await roll(0));
    expect(first.key).toMatch(/^psk_/);
    const again = await roll(0);
    expect([again.status, again.headers.get("idempotent-replayed"), (await json(again)).key]).toEqual([
      200,
      "true",
      null,
    ]);
    const other = await roll(5);
    expect([other.status, (await json(other)).code]).toEqual([422, "idempotency_key_reused"]);
    const trail = await adapters.keys.auditTrail({ limit: 10, keyId: id });
    expect(trail.map((entry) => entry.action)).toEqual(["roll", "create"]);
  });

  it("answers a create retried after a crash between the key and its record with the key the first attempt made", async () => {
    const clock = { now: T0 };
    const adapters = memoryAdapters({ clock: () => clock.now });
    // The process ends after the key is stored, before its Idempotency-Key is marked done.
    const idempotency = {
      claim: (claim: IdempotencyClaim) => adapters.idempotency.claim(claim),
      release: (claim: IdempotencyClaim) => adapters.idempotency.release(claim),
      complete: async () => {
        throw new Error("the process ended");
      },
    };
    const admin = createAdmin({
      keys: adapters.keys,
      limiter: adapters.limiter,
      idempotency,
      authenticate: () => ADMIN,
    });
    const post = () =>
      admin.fetch(
        new Request("http://admin.test/admin/v1/keys", {
          method: "POST",
          headers: { "Content-Type": "application/json", "Idempotency-Key": "signup-9" },
          body: JSON.stringify({ plan: "pro" }),
        }),
      );
    const first = await json<{ id: string; key: string }>(await post());
    expect(first.key).toMatch(/^psk_/);
    // Its claim is held until its lease ends; then the retry finds the key by its id.
    expect((await post()).status).toBe(409);
    clock.now += 61_000;
    const retried = await post();
    expect([retried.status, retried.headers.get("idempotent-replayed")]).toEqual([201, "true"]);
    expect(await json(retried)).toMatchObject({ id: first.id, key: null, plan: "pro" });
    expect(await adapters.keys.list()).toHaveLength(1);
  });

  it("applies a change to the API of this process at once, though its key cache keeps keys 5 s", async () => {
    const { call, api, create, clock } = setUp();
    const { id, key } = await create();
    expect((await api(key)).headers.get("x-ratelimit-limit")).toBe("60");
    await call("PATCH", `/keys/${id}`, { plan: "pro" });
    expect((await api(key)).headers.get("x-ratelimit-limit")).toBe("300");
    const { key: fresh } = await json<{ key: string }>(await call("POST", `/keys/${id}/roll`, { overlapSeconds: 8 }));
    const old = await api(key);
    expect([old.status, old.headers.get("sunset")]).toEqual([200, new Date(T0 + 8_000).toUTCString()]);
    await call("POST", `/keys/${id}/revoke`);
    clock.now += 1;
    for (const secret of [key, fresh])
      expect(await json(await api(secret))).toMatchObject({ status: 401, message: "The API key has been revoked" });
  });

  it("refuses the old secret at once after a roll with no overlap", async () => {
    const { call, api, create } = setUp();
    const { id, key } = await create();
    expect((await api(key)).status).toBe(200);
    await call("POST", `/keys/${id}/roll`, { overlapSeconds: 0 });
    expect(await json(await api(key))).toMatchObject({
      status: 401,
      message: "This secret of the API key was replaced when the key was rolled: use the new one",
    });
  });

  it("audits a create with everything it set and an update's expiry as ISO 8601", async () => {
    const { call, adapters } = setUp();
    const { id } = await json<{ id: string }>(
      await call("POST", "/keys", {
        plan: "free",
        perMinute: 1_000_000_000,
        label: "big",
        expiresAt: "2031-01-01T00:00:00Z",
      }),
    );
    await call("PATCH", `/keys/${id}`, { expiresAt: "2032-01-01T00:00:00+01:00", perDay: null });
    const [update, created] = await adapters.keys.auditTrail({ limit: 2, keyId: id });
    expect(created!.details).toEqual({
      plan: "free",
      perMinute: 1_000_000_000,
      label: "big",
      expiresAt: "2031-01-01T00:00:00.000Z",
    });
    expect(update!.details).toEqual({ expiresAt: "2031-12-31T23:00:00.000Z", perDay: null });
  });

  it("creates a key with fewer scopes and ranges, shows them, and the API refuses it outside them", async () => {
    const { call, api } = setUp();
    const created = await call("POST", "/keys", {
      plan: "free",
      scopes: ["orders:read"],
      allowFrom: ["203.0.113.0/24"],
    });
    expect(created.status).toBe(201);
    const { id, key, ...view } = await json<{ id: string; key: string; scopes: string[]; allowFrom: string[] }>(
      created,
    );
    expect(view).toMatchObject({ scopes: ["orders:read"], allowFrom: ["203.0.113.0/24"] });
    expect(await json(await api(key))).toMatchObject({ status: 403, code: "insufficient_scope" });
    const opened = await call("PATCH", `/keys/${id}`, {
      scopes: ["pets:read", "orders:read"],
      allowFrom: ["10.0.0.0/8"],
    });
    expect(await json(opened)).toMatchObject({ scopes: ["pets:read", "orders:read"], allowFrom: ["10.0.0.0/8"] });
    expect(await json(await api(key))).toMatchObject({ status: 403, code: "address_not_allowed" });
    const cleared = await call("PATCH", `/keys/${id}`, { scopes: null, allowFrom: null });
    expect(await json(cleared)).toMatchObject({ scopes: ["pets:read", "pets:write", "orders:read"], allowFrom: null });
    expect((await api(key)).status).toBe(200);
  });

  it("audits a change of scopes and ranges with what it set", async () => {
    const { call, adapters, create } = setUp();
    const { id } = await create();
    await call("PATCH", `/keys/${id}`, { scopes: ["orders:read", "pets:read"], allowFrom: ["2001:db8::/32"] });
    await call("PATCH", `/keys/${id}`, { scopes: ["pets:read", "pets:write", "orders:read"], allowFrom: null });
    const [opened, limited] = await adapters.keys.auditTrail({ limit: 2, keyId: id });
    expect(limited!.details).toEqual({ scopes: ["pets:read", "orders:read"], allowFrom: ["2001:db8::/32"] });
    expect(opened!.details).toEqual({ scopes: null, allowFrom: null });
  });

  it("refuses bad scopes and ranges with 400 naming the field (a scope by its place), storing nothing", async () => {
    const { call, adapters } = setUp();
    for (const [field, value, message] of [
      ["scopes", [], "must be one or more of pets:read, pets:write, orders:read"],
      ["scopes.0", ["pets:delete"], "must be one or more of pets:read, pets:write, orders:read, not 'pets:delete'"],
      [
        "allowFrom",
        ["10.0.0.0/33"],
        "must be CIDR ranges: '10.0.0.0/33' has a prefix past /32, the longest an IPv4 range has",
      ],
      ["allowFrom", ["::/129"], "must be CIDR ranges: '::/129' has a prefix past /128, the longest an IPv6 range has"],
      ["allowFrom", ["10.0.0"], "must be CIDR ranges: '10.0.0' is not an IP address or CIDR range"],
      ["allowFrom", "10.0.0.0/8", "must be 1 to 100 CIDR ranges such as 10.0.0.0/8 or 2001:db8::/32"],
    ] as const) {
      const response = await call("POST", "/keys", { plan: "free", [field.split(".")[0]!]: value });
      expect(await json(response), JSON.stringify(value)).toMatchObject({
        status: 400,
        code: "invalid_body",
        details: [{ path: field, message }],
      });
    }
    expect(await adapters.keys.list()).toEqual([]);
  });

  it("refuses a label an operator's screen would show wrong, as the CLI does", async () => {
    const { admin, call, adapters } = setUp();
    for (const [label, message] of [
      ["", "must not be empty"],
      ["\u202Egnp.exe", "must not contain bidirectional control characters (U+202A to U+202E, U+2066 to U+2069)"],
      ["\uFFFE", "must not contain Unicode noncharacters"],
    ]) {
      const response = await call("POST", "/keys", { plan: "free", label: JSON.parse(`"${label}"`) });
      expect(await json(response), label).toMatchObject({ status: 400, details: [{ path: "label", message }] });
    }
    // A lone surrogate, as JSON can carry it: refused, not stored as U+FFFD.
    const lone = await admin.fetch(
      new Request("http://admin.test/admin/v1/keys", {
        method: "POST",
        headers: { Authorization: TOKEN, "Content-Type": "application/json" },
        body: '{"plan":"free","label":"x\\ud800"}',
      }),
    );
    expect(await json(lone)).toMatchObject({
      status: 400,
      details: [{ path: "label", message: "must be valid UTF-16 (no lone surrogate)" }],
    });
    expect(await adapters.keys.list()).toEqual([]);
  });

  it("refuses before authentication a request another site's page sent, and a host name it does not answer", async () => {
    const { admin: open } = setUp();
    const { admin: pinned } = setUp({ allowHost: (host) => host === "127.0.0.1" });
    const refused = async (fetched: Promise<Response>) => {
      const response = await fetched;
      expect(response.status).toBe(403);
      expect(response.headers.get("x-request-id")).not.toBeNull();
      return (await json(response)).message;
    };
    const from = (headers: Record<string, string>, url = "http://127.0.0.1:9465/admin/v1/keys") =>
      new Request(url, { headers });
    expect(await refused(open.fetch(from({ "Sec-Fetch-Site": "cross-site" })))).toBe(
      "A request from another site's page is refused by the admin API",
    );
    await refused(open.fetch(from({ "Sec-Fetch-Site": "same-site" })));
    await refused(open.fetch(from({ Origin: "http://127.0.0.1:8080" })));
    await refused(open.fetch(from({ Origin: "null" })));
    expect(await refused(pinned.fetch(from({}, "http://evil.example:9465/admin/v1/openapi.json")))).toBe(
      "The admin API does not answer the host name evil.example",
    );
    // Its own page, a typed address, a client without a browser: on to authentication.
    for (const headers of [
      { "Sec-Fetch-Site": "same-origin", Origin: "http://127.0.0.1:9465" },
      { "Sec-Fetch-Site": "none" },
      {},
    ])
      expect((await pinned.fetch(from(headers))).status).toBe(401);
  });

  it("says at construction what it lacks", () => {
    const { keys, limiter } = memoryAdapters();
    expect(() => createAdmin({ keys, limiter } as unknown as AdminOptions)).toThrow(
      new TypeError(
        "createAdmin needs authenticate beside keys and limiter: createAdmin({ keys: adapters.keys, limiter: adapters.limiter, authenticate: (request) => yourOperator(request) })",
      ),
    );
    expect(() => createAdmin({ keys, limiter, authenticate: "token" } as unknown as AdminOptions)).toThrow(
      new TypeError("createAdmin's authenticate must be a function, not string"),
    );
  });

  it("names a body it cannot take in people's words, never a type's name", async () => {
    const { call, create } = setUp({ tokens: memoryAdminTokens() });
    const { id } = await create();
    for (const [method, path, body, words] of [
      ["POST", "/keys", { plan: "free", color: "red" }, "new key"],
      ["PATCH", `/keys/${id}`, { color: "red" }, "change to a key"],
      ["POST", `/keys/${id}/roll`, { color: "red" }, "roll"],
      ["POST", "/tokens", { color: "red" }, "new admin token"],
    ] as const) {
      const answer = await json<{ message: string; details: { path: string; message: string }[] }>(
        await call(method, path, body),
      );
      expect(answer.message).toBe(`The request body is not a valid ${words}`);
      expect(answer.details).toContainEqual({ path: "color", message: `is not a field of a ${words}` });
    }
  });

  it("refuses a body in another charset than UTF-8 with 415, and a member given twice with 400 naming it", async () => {
    const { admin, call, create } = setUp();
    const { id } = await create();
    const utf16 = await call(
      "PATCH",
      `/keys/${id}`,
      { label: "x" },
      { "Content-Type": "application/json; charset=utf-16" },
    );
    expect([utf16.status, (await json(utf16)).code]).toEqual([415, "unsupported_media_type"]);
    const twice = await admin.fetch(
      new Request(`http://admin.test/admin/v1/keys/${id}`, {
        method: "PATCH",
        headers: { Authorization: TOKEN, "Content-Type": "application/json" },
        body: '{"plan":"free","plan":"enterprise"}',
      }),
    );
    expect(twice.status).toBe(400);
    expect(await json(twice)).toMatchObject({
      code: "invalid_body",
      details: [{ path: "plan", message: "is given more than once" }],
    });
  });

  it("documents a create's Location and Idempotent-Replayed, a roll's Idempotent-Replayed, and the 405 of every path", async () => {
    const { admin: handler } = setUp();
    const document = await json<{
      paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>;
      components: { responses: Record<string, { headers: Record<string, unknown> }> };
    }>(await handler.fetch(new Request("http://admin.test/admin/v1/openapi.json")));
    expect(Object.keys(document.paths["/keys"]!.post!.responses["201"]!.headers!)).toEqual([
      "Location",
      "Idempotent-Replayed",
    ]);
    expect(Object.keys(document.paths["/keys/{id}/roll"]!.post!.responses["200"]!.headers!)).toEqual([
      "Idempotent-Replayed",
    ]);
    expect(Object.keys(document.components.responses.MethodNotAllowed!.headers)).toEqual(["Allow"]);
  });
});
