import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinary } from "./_binary.js";
import { adminToken } from "./_admin.js";
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
  const line = server.stdout
    .map((each) => JSON.parse(each) as { event?: string; url?: string; host?: string })
    .find((entry) => entry.event === "admin listening")!;
  expect(line.host).toBe("127.0.0.1");
  adminUrl = line.url!;
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
    for (const path of ["/admin/v1/keys", "/admin/v1/openapi.json", "/page.js"]) {
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
