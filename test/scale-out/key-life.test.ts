import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { libfaketime, type SteppedWallClock, steppedWallClock } from "../_support/libfaketime.js";
import { type PostgresServer, startPostgres } from "../_support/postgres-server.js";
import { adminToken } from "../e2e/_admin.js";
import { BINARY, ensureBinary } from "../e2e/_binary.js";
import { cleanUp, type Server, startServer, stopProcess, waitFor } from "../e2e/_processes.js";

/**
 * Three servers on one PostgreSQL, each with its admin listener, their
 * clocks 65 s apart (libfaketime): the life of a key through the admin API of one, seen by all.
 * One world, its steps in order: a roll's overlap runs while the rest is checked. PostgreSQL's
 * clock decides every shared instant (a minute's window, a ban, an expiry, the overlap's end):
 * libfaketime in the database server, stepped forward by the test to the instants it checks
 * instead of waiting for them.
 */

const SKEWS = ["-65s", undefined, "+65s"];
const MINUTE = 60_000;
/** The roll's overlap: it outlasts the steps made before its end is checked (two minutes' turns and an expiry a minute ahead). */
const OVERLAP_S = 600;

/** PostgreSQL's wall clock. */
let storeClock: SteppedWallClock;
let pg: PostgresServer;
let servers: Server[] = [];
let admins: string[] = [];
let token: string;

beforeAll(async () => {
  ensureBinary();
  storeClock = steppedWallClock();
  pg = await startPostgres({ env: storeClock.env });
  const db = await pg.createDatabase("key_life");
  token = await adminToken(db);
  servers = await Promise.all(
    SKEWS.map((skew) =>
      startServer(
        [
          BINARY,
          "serve",
          "--host",
          "127.0.0.1",
          "--port",
          "0",
          "--db",
          db,
          "--admin-listen",
          "0",
          "--rolled-key-link",
          "https://shop.example/keys",
        ],
        {
          env: {
            ...process.env,
            ...(skew && { LD_PRELOAD: libfaketime(), FAKETIME: skew, FAKETIME_DONT_FAKE_MONOTONIC: "1" }),
          },
        },
      ),
    ),
  );
  admins = servers.map(
    (server) =>
      server.stdout
        .map((line) => JSON.parse(line) as { event?: string; url?: string })
        .find((entry) => entry.event === "admin listening")!.url!,
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => stopProcess(server.child, "SIGTERM")));
  await cleanUp();
  await pg?.destroy();
  storeClock?.remove();
});

/** Steps the database's clock forward to the start of its next minute: a new window for every bucket. */
const toNextMinute = () => storeClock.stepForwardTo(Math.floor(storeClock.now() / MINUTE) * MINUTE + MINUTE);

const admin = async (index: number, method: string, path: string, body?: unknown) => {
  const response = await fetch(new URL(`/admin/v1${path}`, admins[index]), {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body !== undefined && { "Content-Type": "application/json" }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path} on admin ${index}: ${response.status} ${await response.text()}`);
  return (await response.json()) as { id: string; key: string; rolling: { until: string } | null; unbanned?: boolean };
};
const api = (index: number, key: string, path = "/v1/pets?limit=1") =>
  fetch(new URL(path, servers[index]!.url), { headers: { Authorization: `Bearer ${key}` } });
const onAll = (key: string, path?: string) => Promise.all([0, 1, 2].map((index) => api(index, key, path)));
const statuses = (responses: Response[]) => responses.map((response) => response.status);

/** Between two checks of the fleet: each is three requests of a key with 60 a minute. */
const POLL_MS = 500;

type AdminAnswer = Awaited<ReturnType<typeof admin>>;

describe("the life of a key on three servers sharing PostgreSQL, their clocks 65 s apart", () => {
  // One world, built in order through the admin APIs: each step's keys and figures are read by the later ones.
  let free: AdminAnswer;
  let noisy: AdminAnswer;
  let rolled: AdminAnswer;
  let overlapEnds: number;
  let tellsTheRoll: number;
  let upgradeMs: number;

  it("serves a key made through the first's admin API on all three at once", async () => {
    free = await admin(0, "POST", "/keys", { plan: "free", label: "Acme" });
    expect(statuses(await onAll(free.key))).toEqual([200, 200, 200]);
  });

  it("bans a key over its limit on all three", async () => {
    noisy = await admin(0, "POST", "/keys", { plan: "free", label: "Noisy" });
    // All of its 92 requests in one minute window: they start at the minute's start.
    toNextMinute();
    for (let i = 0; i < 92; i++) await api(i % 3, noisy.key);
    expect(
      await Promise.all(
        (await onAll(noisy.key)).map(async (response) => ((await response.json()) as { code: string }).code),
      ),
    ).toEqual(["temporarily_banned", "temporarily_banned", "temporarily_banned"]);
  });

  it("serves the new secret of a roll through the second's admin API on all three", async () => {
    rolled = await admin(1, "POST", `/keys/${free.id}/roll`, { overlapSeconds: OVERLAP_S });
    overlapEnds = Date.parse(rolled.rolling!.until);
    expect(statuses(await onAll(rolled.key))).toEqual([200, 200, 200]);
  });

  it("serves the old secret with Sunset, the roll's link and one Deprecation on all three once their key caches saw the roll", async () => {
    tellsTheRoll = await waitFor(
      async () =>
        (await onAll(free.key)).every((response) => response.status === 200 && response.headers.get("sunset") !== null),
      6_000,
      {
        every: POLL_MS,
        what: "the old secret served with Sunset by all three",
      },
    );
    const old = await onAll(free.key);
    expect(old.map((response) => response.headers.get("sunset"))).toEqual(
      Array(3).fill(new Date(overlapEnds).toUTCString()),
    );
    expect(old.map((response) => response.headers.get("link"))).toEqual(
      Array(3).fill('<https://shop.example/keys>; rel="deprecation"'),
    );
    expect(new Set(old.map((response) => response.headers.get("deprecation"))).size).toBe(1);
  });

  it("applies an upgrade from Free to Pro through the third's admin API on all three within 5 s, the minute's count kept", async () => {
    // Not across a minute's end (a new minute counts from zero): it starts at a minute's start.
    toNextMinute();
    const before = Number((await api(0, rolled.key)).headers.get("x-ratelimit-remaining"));
    await admin(2, "PATCH", `/keys/${free.id}`, { plan: "pro" });
    upgradeMs = await waitFor(
      async () => (await onAll(rolled.key)).every((response) => response.headers.get("x-ratelimit-limit") === "300"),
      5_500,
      {
        every: POLL_MS,
        what: "Pro's 300 a minute on all three",
      },
    );
    const remaining = Number((await api(1, rolled.key)).headers.get("x-ratelimit-remaining"));
    // Free's minute had `before` left of 60; Pro's has the same requests counted, of 300.
    expect(remaining).toBeLessThanOrEqual(300 - (60 - before) - 1);
  }, 30_000);

  it("refuses a key on all three at the instant it expires by the database's clock, not before", async () => {
    const expiresAt = storeClock.now() + MINUTE;
    const expiring = await admin(0, "POST", "/keys", {
      plan: "free",
      label: "Trial",
      expiresAt: new Date(expiresAt).toISOString(),
    });
    expect(statuses(await onAll(expiring.key))).toEqual([200, 200, 200]);
    storeClock.stepForwardTo(expiresAt - 1_000);
    expect(statuses(await onAll(expiring.key))).toEqual([200, 200, 200]);
    storeClock.stepForwardTo(expiresAt + 1_000);
    expect(statuses(await onAll(expiring.key))).toEqual([401, 401, 401]);
  });

  it("keeps the ban past the minute's turn until it is lifted through an admin API, then admits the key on all three", async () => {
    toNextMinute();
    expect(((await (await api(0, noisy.key)).json()) as { code: string }).code).toBe("temporarily_banned");
    expect((await admin(1, "POST", `/keys/${noisy.id}/unban`)).unbanned).toBe(true);
    expect(statuses(await onAll(noisy.key))).toEqual([200, 200, 200]);
  });

  it("refuses the old secret on all three at the overlap's end, not before, the new one still served", async () => {
    storeClock.stepForwardTo(overlapEnds - 1_000);
    expect(statuses(await onAll(free.key))).toEqual([200, 200, 200]);
    storeClock.stepForwardTo(overlapEnds + 1_000);
    expect(statuses(await onAll(free.key))).toEqual([401, 401, 401]);
    expect(statuses(await onAll(rolled.key))).toEqual([200, 200, 200]);
  });

  it("audits every step, in order, under the admin token", async () => {
    const trail = (await (
      await fetch(new URL("/admin/v1/audit?limit=20", admins[0]), { headers: { Authorization: `Bearer ${token}` } })
    ).json()) as { action: string; keyId: string; actor: { who: string } }[];
    // Each key made without an account has one of its own (`acct_` and its id's characters), audited under its id.
    const nameOf = (id: string) => {
      const key = id.replace(/^acct_/, "key_");
      const name = key === free.id ? "acme" : key === noisy.id ? "noisy" : "trial";
      return id.startsWith("acct_") ? `${name}'s account` : name;
    };
    const steps = trail.reverse().map((entry) => `${entry.action} ${nameOf(entry.keyId)}`);
    console.info(
      `old secret told of the roll within ${tellsTheRoll} ms, upgrade on all three within ${upgradeMs} ms; audit trail: ${steps.join(", ")}`,
    );
    expect(steps).toEqual([
      "create acme's account",
      "create acme",
      "create noisy's account",
      "create noisy",
      "roll acme",
      "update acme",
      "update acme's account",
      "create trial's account",
      "create trial",
      "unban noisy",
    ]);
    expect(trail.every((entry) => entry.actor.who.startsWith("admin:tok_"))).toBe(true);
  });
});
