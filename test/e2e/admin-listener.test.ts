import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinary } from "./_binary.js";
import { adminListening, adminToken } from "./_admin.js";
import {
  binaryServe,
  cleanUp,
  cli,
  createKey,
  type Server,
  startServer,
  stopProcess,
  tempDatabaseUrl,
} from "./_processes.js";

/** The binary's admin listener from outside: its own address, admin tokens, and nothing of it on the API's port. */

let db: string;
let server: Server;
let adminUrl: string;
let token: string;

beforeAll(async () => {
  ensureBinary();
  db = tempDatabaseUrl();
  await createKey(db);
  token = await adminToken(db);
  server = await startServer([...binaryServe(db), "--admin-listen", "0"]);
  const line = adminListening(server);
  expect(line.host).toBe("127.0.0.1");
  adminUrl = line.url;
}, 120_000);

afterAll(async () => {
  if (server) await stopProcess(server.child, "SIGTERM");
  await cleanUp();
});

const admin = (path: string, init: RequestInit = {}) =>
  fetch(new URL(path, adminUrl), {
    ...init,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", ...init.headers },
  });

describe("petstore serve --admin-listen", () => {
  it("refuses the API's own address and the metrics listener's, as a usage error", async () => {
    const same = await cli([
      "serve",
      "--host",
      "127.0.0.1",
      "--port",
      "8999",
      "--admin-listen",
      "127.0.0.1:8999",
      "--db",
      db,
    ]);
    expect(same.code).toBe(2);
    expect(same.stderr.split("\n")[0]).toBe(
      "petstore: --admin-listen 127.0.0.1:8999 is the API's own address: the admin API is never served on the API's port; give it a port of its own",
    );
    const metrics = await cli([
      "serve",
      "--port",
      "0",
      "--metrics-listen",
      "127.0.0.1:9464",
      "--admin-listen",
      "9464",
      "--db",
      db,
    ]);
    expect(metrics.code).toBe(2);
    expect(metrics.stderr.split("\n")[0]).toBe(
      "petstore: --admin-listen 9464 is the metrics listener's address: give each its own port",
    );
  });

  it("serves the admin API and the operator's page on its own address only: the API's port answers 404 there, and the admin port 404 for the API", async () => {
    expect((await admin("/admin/v1/keys")).status).toBe(200);
    expect((await fetch(new URL("/", adminUrl))).headers.get("content-type")).toBe("text/html; charset=utf-8");
    for (const path of ["/admin/v1/keys", "/admin/v1/openapi.json", "/page.mjs"]) {
      const onApi = await fetch(new URL(path, server.url), { headers: { Authorization: `Bearer ${token}` } });
      expect(onApi.status, path).toBe(404);
    }
    expect((await admin("/v1/pets")).status).toBe(404);
  });

  it("creates a key the API serves at once, audited with the token's id and the address", async () => {
    const created = await admin("/admin/v1/keys", {
      method: "POST",
      body: JSON.stringify({ plan: "pro", label: "e2e" }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("cache-control")).toBe("no-store");
    const { id, key } = (await created.json()) as { id: string; key: string };
    const served = await fetch(new URL("/v1/pets", server.url), { headers: { Authorization: `Bearer ${key}` } });
    expect([served.status, served.headers.get("x-ratelimit-limit")]).toEqual([200, "300"]);
    const [entry] = (await (await admin(`/admin/v1/audit?keyId=${id}`)).json()) as {
      action: string;
      actor: { who: string; from: string };
    }[];
    expect(entry).toMatchObject({
      action: "create",
      actor: { who: expect.stringMatching(/^admin:tok_/), from: "127.0.0.1" },
    });
    const log = server.stdout
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.admin === true);
    expect(
      log.some(
        (line) =>
          line.path === "/admin/v1/keys" &&
          line.method === "POST" &&
          line.status === 201 &&
          String(line.tokenId).startsWith("tok_"),
      ),
    ).toBe(true);
    expect(server.stdout.join("\n")).not.toContain(token);
  });

  it("takes no API key for an admin token and no admin token for an API key", async () => {
    const { key } = await createKey(db);
    expect((await admin("/admin/v1/keys", { headers: { Authorization: `Bearer ${key}` } })).status).toBe(401);
    expect(
      (await fetch(new URL("/v1/pets", server.url), { headers: { Authorization: `Bearer ${token}` } })).status,
    ).toBe(401);
  });
});

/** A request with a `Host` of its own choosing (fetch sets its own): status and body. */
function withHost(url: string, host: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: { code?: string; message?: string } }>((resolve, reject) => {
    const target = new URL(url);
    const sent = httpRequest(
      { hostname: target.hostname, port: target.port, path: target.pathname, headers: { ...headers, Host: host } },
      (response) => {
        let text = "";
        response.on("data", (chunk: Buffer) => (text += chunk.toString()));
        response.on("end", () => resolve({ status: response.statusCode!, body: JSON.parse(text || "{}") }));
      },
    );
    sent.on("error", reject);
    sent.end();
  });
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  admin(path, { method: "POST", body: JSON.stringify(body), headers });
// biome-ignore lint/suspicious/noExplicitAny: a test reads the answers' fields freely
const json = async (response: Response): Promise<any> => response.json();
const api = (key: string) =>
  fetch(new URL("/v1/pets?limit=1", server.url), { headers: { Authorization: `Bearer ${key}` } });

describe("the key life on the binary's admin API", () => {
  it("refuses a PATCH to enterprise without limits of the key's own, as POST and the CLI do", async () => {
    const { id } = await json(await post("/admin/v1/keys", { plan: "free" }));
    const patched = await admin(`/admin/v1/keys/${id}`, {
      method: "PATCH",
      body: JSON.stringify({ plan: "enterprise" }),
    });
    expect(patched.status).toBe(400);
    expect((await json(patched)).details.map((detail: { path: string }) => detail.path)).toEqual([
      "perMinute",
      "perDay",
    ]);
    expect((await json(await admin(`/admin/v1/keys/${id}`))).plan).toBe("free");
  });

  it("answers a roll with no overlap sent twice with one Idempotency-Key once, and 422 to another body", async () => {
    const { id } = await json(await post("/admin/v1/keys", { plan: "free" }));
    const first = await post(`/admin/v1/keys/${id}/roll`, { overlapSeconds: 0 }, { "Idempotency-Key": "leak-1" });
    const again = await post(`/admin/v1/keys/${id}/roll`, { overlapSeconds: 0 }, { "Idempotency-Key": "leak-1" });
    const other = await post(`/admin/v1/keys/${id}/roll`, { overlapSeconds: 5 }, { "Idempotency-Key": "leak-1" });
    expect((await json(first)).key).toMatch(/^psk_/);
    expect([again.status, again.headers.get("idempotent-replayed"), (await json(again)).key]).toEqual([
      200,
      "true",
      null,
    ]);
    expect([other.status, (await json(other)).code]).toEqual([422, "idempotency_key_reused"]);
    const trail = await json(await admin(`/admin/v1/audit?keyId=${id}`));
    expect(trail.map((entry: { action: string }) => entry.action)).toEqual(["roll", "create"]);
  });

  it("refuses the old secret at once after a roll with no overlap through this server's admin API", async () => {
    const { id, key } = await json(await post("/admin/v1/keys", { plan: "free" }));
    expect((await api(key)).status).toBe(200);
    await post(`/admin/v1/keys/${id}/roll`, { overlapSeconds: 0 });
    const refused = await api(key);
    expect([refused.status, (await json(refused)).message]).toEqual([
      401,
      "This secret of the API key was replaced when the key was rolled: use the new one",
    ]);
  });

  it("answers the old secret with Deprecation and Sunset at once after a roll with an 8 s overlap through this server's admin API", async () => {
    const { id, key } = await json(await post("/admin/v1/keys", { plan: "free" }));
    expect((await api(key)).headers.get("sunset")).toBeNull();
    const { rolling } = await json(await post(`/admin/v1/keys/${id}/roll`, { overlapSeconds: 8 }));
    const old = await api(key);
    expect([old.status, old.headers.get("sunset")]).toEqual([200, new Date(rolling.until).toUTCString()]);
    expect(old.headers.get("deprecation")).toBe(`@${Math.floor(Date.parse(rolling.since) / 1000)}`);
  });

  it("audits a create with its plan, limits, label and expiry, and an update's expiry as ISO 8601", async () => {
    const { id } = await json(
      await post("/admin/v1/keys", {
        plan: "free",
        perMinute: 1_000_000_000,
        label: "big",
        expiresAt: "2099-01-31T00:00:00Z",
      }),
    );
    await admin(`/admin/v1/keys/${id}`, {
      method: "PATCH",
      body: JSON.stringify({ expiresAt: "2099-02-01T00:00:00+01:00" }),
    });
    const [update, create] = await json(await admin(`/admin/v1/audit?keyId=${id}`));
    expect(create.details).toEqual({
      plan: "free",
      perMinute: 1_000_000_000,
      label: "big",
      expiresAt: "2099-01-31T00:00:00.000Z",
    });
    expect(update.details).toEqual({ expiresAt: "2099-01-31T23:00:00.000Z" });
  });

  it("refuses an empty label, a right-to-left override, a noncharacter and a lone surrogate, as the CLI does", async () => {
    for (const body of [
      '{"plan":"free","label":""}',
      '{"plan":"free","label":"\\u202egnp.exe"}',
      '{"plan":"free","label":"\\uffff"}',
      '{"plan":"free","label":"\\ud800"}',
    ]) {
      const response = await admin("/admin/v1/keys", { method: "POST", body });
      expect([response.status, (await json(response)).details[0].path], body).toEqual([400, "label"]);
    }
    const created = await cli(["keys", "create", "--plan", "free", "--label", "\u202egnp.exe", "--db", db]);
    expect([created.code, created.stderr.split("\n")[0]]).toEqual([
      2,
      "petstore: --label must not contain bidirectional control characters (U+202A to U+202E, U+2066 to U+2069)",
    ]);
  });
});

describe("the admin listener's door", () => {
  it("refuses a Host that is not its own, before authentication, on the page, the document and the API", async () => {
    const port = new URL(adminUrl).port;
    for (const path of ["/", "/admin/v1/openapi.json", "/admin/v1/keys"]) {
      const answer = await withHost(new URL(path, adminUrl).href, `evil.example:${port}`, {
        Authorization: `Bearer ${token}`,
      });
      expect([answer.status, answer.body.code], path).toEqual([403, "forbidden"]);
    }
    expect(
      (
        await withHost(new URL("/admin/v1/keys", adminUrl).href, `localhost:${port}`, {
          Authorization: `Bearer ${token}`,
        })
      ).status,
    ).toBe(200);
  });

  it("refuses what another site's page sends, and counts none of it: 35 such requests, then the operator's token is served", async () => {
    for (let i = 0; i < 35; i++) {
      const sent = await fetch(new URL("/admin/v1/keys", adminUrl), { headers: { "Sec-Fetch-Site": "cross-site" } });
      expect(sent.status).toBe(403);
    }
    const other = await fetch(new URL("/admin/v1/keys", adminUrl), {
      method: "POST",
      headers: { Origin: server.url, Authorization: `Bearer ${token}` },
    });
    expect(other.status).toBe(403);
    expect((await admin("/admin/v1/keys")).status).toBe(200);
  });

  it("counts no request without a credential toward a lockout", async () => {
    for (let i = 0; i < 35; i++) expect((await fetch(new URL("/admin/v1/keys", adminUrl))).status).toBe(401);
    expect((await admin("/admin/v1/keys")).status).toBe(200);
  });

  it("says a wrong token was refused and a missing one is required", async () => {
    const none = await fetch(new URL("/admin/v1/keys", adminUrl));
    expect((await json(none)).message).toBe("An admin credential is required");
    const wrong = await admin("/admin/v1/keys", {
      headers: { Authorization: `Bearer ${token.slice(0, -1)}${token.endsWith("a") ? "b" : "a"}` },
    });
    expect([wrong.status, (await json(wrong)).message]).toEqual([401, "The admin token was refused"]);
  });

  it("refuses to listen where other machines reach it unless told, and then says the address it listens on", async () => {
    const refused = await cli(["serve", "--port", "0", "--admin-listen", "0.0.0.0:0", "--db", db]);
    expect([refused.code, refused.stderr.split("\n")[0]]).toEqual([
      2,
      "petstore: --admin-listen 0.0.0.0:0 is reachable from other machines: listen on 127.0.0.1 and reach it through a tunnel (ssh -L), or give --admin-listen-public too",
    ]);
    const open = await startServer([...binaryServe(db), "--admin-listen", "0.0.0.0:0", "--admin-listen-public"]);
    try {
      const line = adminListening(open);
      expect(line).toMatchObject({ host: "0.0.0.0", url: `http://0.0.0.0:${line.port}/` });
    } finally {
      await stopProcess(open.child, "SIGTERM");
    }
  });
});
