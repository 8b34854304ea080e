import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinary } from "./_binary.js";
import { adminListening, adminToken } from "./_admin.js";
import { binaryServe, cleanUp, type Server, startServer, stopProcess, tempDatabaseUrl, waitFor } from "./_processes.js";

/**
 * An account's life through the binary's admin listener, on a file database: made, a key made
 * into it, its keys listed, its plan changed (the key follows, on the API at once), its keys'
 * usage summed, every change in the audit trail.
 */

let server: Server;
let adminUrl: string;
let token: string;
/** What the world holds, as the admin API answered it. */
const made = { accountId: "", keyId: "", key: "" };

beforeAll(async () => {
  ensureBinary();
  const db = tempDatabaseUrl();
  token = await adminToken(db);
  server = await startServer([...binaryServe(db), "--admin-listen", "0"]);
  adminUrl = adminListening(server).url;
  const account = await admin(
    "POST",
    "/admin/v1/accounts",
    { name: "Shop", plan: "free" },
    { "Idempotency-Key": "a1" },
  );
  made.accountId = account.body.id;
  const key = await admin("POST", "/admin/v1/keys", { accountId: made.accountId, label: "staging" });
  Object.assign(made, { keyId: key.body.id, key: key.body.key });
}, 120_000);

afterAll(async () => {
  if (server) await stopProcess(server.child, "SIGTERM");
  await cleanUp();
});

async function admin(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(new URL(path, adminUrl), {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", ...headers },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the admin API's JSON, read field by field
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

const api = () => fetch(new URL("/v1/pets", server.url), { headers: { Authorization: `Bearer ${made.key}` } });

describe("accounts through the admin listener", () => {
  it("creates an account with its Location, and answers a retry with the same Idempotency-Key with it", async () => {
    const again = await admin(
      "POST",
      "/admin/v1/accounts",
      { name: "Shop", plan: "free" },
      { "Idempotency-Key": "a1" },
    );
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe(`/admin/v1/accounts/${made.accountId}`);
    expect(again.body).toMatchObject({ id: made.accountId, name: "Shop", plan: "free", perMinute: 60, keys: 1 });
  });

  it("makes a key into the account with the account's plan, listed among the account's keys", async () => {
    const keys = await admin("GET", `/admin/v1/keys?account=${made.accountId}`);
    expect(keys.body.map((key: { id: string }) => key.id)).toEqual([made.keyId]);
    expect(keys.body[0]).toMatchObject({ accountId: made.accountId, plan: "free", label: "staging" });
  });

  it("lists the account among the accounts of its plan", async () => {
    const listed = await admin("GET", "/admin/v1/accounts?plan=free");
    expect(listed.body).toEqual({ accounts: [expect.objectContaining({ id: made.accountId })], nextCursor: null });
  });

  it("changes the account's plan: its key follows, on the API at once", async () => {
    expect((await api()).headers.get("x-ratelimit-limit")).toBe("60");
    const changed = await admin("PATCH", `/admin/v1/accounts/${made.accountId}`, { plan: "pro" });
    expect(changed.body).toMatchObject({ plan: "pro", perMinute: 300, perDay: 10_000 });
    expect((await admin("GET", `/admin/v1/keys/${made.keyId}`)).body.plan).toBe("pro");
    expect((await api()).headers.get("x-ratelimit-limit")).toBe("300");
  });

  it("sums its keys' usage as the servers write it (within the 10 s flush)", async () => {
    const usage = () => admin("GET", `/admin/v1/accounts/${made.accountId}/usage?step=hour`);
    await waitFor(async () => (await usage()).body.totals.admitted === 2, 20_000, { every: 500 });
    expect((await usage()).body).toMatchObject({
      accountId: made.accountId,
      keyIds: [made.keyId],
      totals: { admitted: 2, rateLimited: 0, banned: 0, unauthorized: 0 },
    });
  });

  it("shows every change of the account in the audit trail, under its id", async () => {
    const trail = await admin("GET", `/admin/v1/audit?keyId=${made.accountId}`);
    expect(trail.body.map((entry: { action: string; details: unknown }) => [entry.action, entry.details])).toEqual([
      ["update", { plan: "pro" }],
      ["create", { name: "Shop", plan: "free" }],
    ]);
    expect(trail.body[0].actor.who).toMatch(/^admin:tok_/);
  });
});
