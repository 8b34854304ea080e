import { hostname, userInfo } from "node:os";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { libfaketime } from "../_support/libfaketime.js";
import { type RedisServer, startRedis } from "../_support/redis-server.js";
import { ensureBinary } from "./_binary.js";
import { client } from "./_http.js";
import {
  binaryServe,
  cleanUp,
  cli,
  createKey,
  startServer,
  stopProcess,
  tempDatabaseUrl,
  waitFor,
} from "./_processes.js";

/**
 * CLI parity, from outside: the compiled `petstore` changes a key in the
 * database while `petstore serve` processes answer with it: an upgrade reaches a running
 * server within its 5 s key cache with today's usage kept, a ban the server set (in the
 * database, or in Redis with `--limiter`) is read and lifted by the CLI and the next request
 * is admitted, and a roll's old secret answers with Deprecation and Sunset until the overlap
 * ends (a server whose clock libfaketime moved past it answers 401).
 */

let redis: RedisServer;

beforeAll(async () => {
  ensureBinary();
  redis = await startRedis();
}, 120_000);

afterAll(async () => {
  await cleanUp();
  await redis?.stop();
});

/** The binary's command line, failing the test with its stderr when it does not exit 0; `--json` output parsed. */
// biome-ignore lint/suspicious/noExplicitAny: a test reads the printed JSON's fields freely
async function petstore(args: string[]): Promise<any> {
  const result = await cli(args);
  if (result.code !== 0) throw new Error(`petstore ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
  return args.includes("--json") ? JSON.parse(result.stdout) : result.stdout;
}

/** Requests until `done(answer)`, at most every `everyMs`, for at most `ms`; resolves with the answers and how long it took. */
async function requestUntil(
  request: () => Promise<Response>,
  done: (response: Response, body: { code?: string }) => boolean,
  ms: number,
  everyMs = 0,
) {
  const answers: { status: number; code: string | undefined }[] = [];
  let response!: Response;
  const elapsedMs = await waitFor(
    async () => {
      response = await request();
      const body = (await response.json()) as { code?: string };
      answers.push({ status: response.status, code: body.code });
      return done(response, body);
    },
    ms,
    {
      every: everyMs,
      what: () => `an answer where ${String(done)}; the last ones ${JSON.stringify(answers.slice(-5))}`,
    },
  );
  return { response, answers, elapsedMs };
}

describe.each([
  { where: "in the database", limiter: () => [] as string[] },
  { where: "in Redis (--limiter)", limiter: () => ["--limiter", redis.url] },
])("keys changed by the CLI while a server counts $where", ({ where, limiter }) => {
  let db: string;
  let id: string;
  let api: ReturnType<typeof client>;
  /** The requests sent until the key was banned, and how many of them were admitted. */
  let banning: Awaited<ReturnType<typeof requestUntil>>;
  let admitted: number;
  let upgradeSeenAfterMs: number;

  beforeAll(async () => {
    db = tempDatabaseUrl();
    const made = await createKey(db, ["--plan", "free", "--per-minute", "2", "--label", "shop"]);
    id = made.id;
    const server = await startServer([...binaryServe(db), ...limiter()]);
    api = client(server.url, made.key);
  });

  afterAll(() => {
    console.log(
      `[keys-cli ${where}] banned after ${banning?.answers.length} requests (${admitted} admitted); upgrade seen by the server after ${upgradeSeenAfterMs} ms`,
    );
  });

  it("bans the key past 30 refusals within a minute, and keys show reads the ban and today's admissions", async () => {
    banning = await requestUntil(
      () => api("/v1/pets?limit=1"),
      (_, body) => body.code === "temporarily_banned",
      30_000,
    );
    admitted = banning.answers.filter((answer) => answer.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(2);
    const banned = await petstore(["keys", "show", id, "--db", db, ...limiter(), "--json"]);
    expect(banned.usage).toMatchObject({ day: { used: admitted, limit: 1_000 }, bannedUntil: expect.any(String) });
    expect(Date.parse(banned.usage.bannedUntil) - Date.now()).toBeGreaterThan(9 * 60_000);
  });

  it.runIf(where !== "in the database")(
    "makes up no usage in keys show without --limiter: the database says its servers count in Redis",
    async () => {
      const blind = await cli(["keys", "show", id, "--db", db, "--json"]);
      expect([blind.code, JSON.parse(blind.stdout).usage, blind.stderr]).toEqual([
        0,
        null,
        expect.stringContaining("give --limiter redis://HOST (or PETSTORE_LIMITER)"),
      ]);
    },
  );

  it("applies an upgrade to the running server within its 5 s key cache, while the ban holds", async () => {
    await petstore(["keys", "update", id, "--plan", "pro", "--per-minute", "plan", "--db", db]);
    const upgrade = await requestUntil(
      () => api("/v1/pets?limit=1"),
      (response) => response.headers.get("x-ratelimit-limit") === "300",
      8_000,
      100,
    );
    upgradeSeenAfterMs = upgrade.elapsedMs;
    // Requests during a ban count nothing.
    expect(upgrade.response.status).toBe(429);
    // 5 s of key cache at most, and one poll and one request more (on 2 shared cores).
    expect(upgrade.elapsedMs).toBeLessThan(6_000);
  });

  it("lifts the ban with keys unban: the next request is admitted at once, on the new plan", async () => {
    expect(await petstore(["keys", "unban", id, "--db", db, ...limiter()])).toBe(
      `Lifted the ban of ${id}: its next request is decided by its limits alone.\n`,
    );
    const next = await api("/v1/pets?limit=1");
    expect(next.status).toBe(200);
    expect(next.headers.get("x-ratelimit-limit")).toBe("300");
  });

  it("keeps today's usage through the upgrade, and the audit trail lists unban, update and create", async () => {
    const after = await petstore(["keys", "show", id, "--db", db, ...limiter(), "--json"]);
    expect(after).toMatchObject({
      plan: "pro",
      perMinute: 300,
      perDay: 10_000,
      label: "shop",
      usage: { day: { used: admitted + 1, limit: 10_000 }, bannedUntil: null },
    });
    const trail = await petstore(["audit", "--key", id, "--db", db, "--json"]);
    expect(trail.map((entry: { action: string }) => entry.action)).toEqual(["unban", "update", "create"]);
  });
});

describe("the CLI on the servers' Redis", () => {
  it("reads and lifts bans there but leaves the data-loss marker to the servers, which would miss a loss it set again", async () => {
    const db = tempDatabaseUrl();
    const { id } = await createKey(db, ["--plan", "free"]);
    // Database 3 of the Redis: nothing there, as after a FLUSHALL no server has noticed yet.
    const empty = `${redis.url}/3`;
    const shown = await petstore(["keys", "show", id, "--db", db, "--limiter", empty, "--json"]);
    expect(shown.usage).toMatchObject({ day: { used: 0 }, bannedUntil: null });
    expect(await petstore(["keys", "unban", id, "--db", db, "--limiter", empty])).toBe(
      `${id} was not banned; nothing changed.\n`,
    );
    const redisClient = new Redis(empty);
    try {
      expect(await redisClient.keys("*")).toEqual([]);
    } finally {
      redisClient.disconnect();
    }
  });
});

describe("a key rolled by the CLI", () => {
  it("answers its old secret with Deprecation and Sunset until the overlap ends, 401 after it, and the new one throughout", async () => {
    const db = tempDatabaseUrl();
    const { key: oldKey, id } = await createKey(db, ["--plan", "free"]);
    const server = await startServer(binaryServe(db));
    expect((await client(server.url, oldKey)("/v1/pets?limit=1")).status).toBe(200);

    const rolled = await petstore(["keys", "roll", id, "--overlap", "60s", "--db", db, "--json"]);
    expect(rolled).toMatchObject({
      id,
      plan: "free",
      rolling: { since: expect.any(String), until: expect.any(String) },
    });
    const { since, until } = rolled.rolling as { since: string; until: string };
    expect(Date.parse(until) - Date.parse(since)).toBe(60_000);
    // The server's key cache may hold the record from before the roll for up to 5 s.
    const old = await requestUntil(
      () => client(server.url, oldKey)("/v1/pets?limit=1"),
      (response) => response.headers.has("sunset"),
      6_000,
      100,
    );
    expect(old.response.status).toBe(200);
    expect(old.response.headers.get("deprecation")).toBe(`@${Math.floor(Date.parse(since) / 1000)}`);
    expect(old.response.headers.get("sunset")).toBe(new Date(until).toUTCString());
    const fresh = await client(server.url, rolled.key)("/v1/pets?limit=1");
    expect([fresh.status, fresh.headers.has("sunset")]).toEqual([200, false]);

    // One roll at a time: the CLI names when the overlap ends.
    const again = await cli(["keys", "roll", id, "--overlap", "0s", "--db", db]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(
      `petstore: ${id} is already rolling: rolled at ${since.replace(/\.\d{3}Z$/, "Z")}, its old secret works until ${until.replace(/\.\d{3}Z$/, "Z")}; roll it again after that (or revoke it, if that secret leaked)\n`,
    );

    // A server 65 s ahead (libfaketime) lives after the overlap: the old secret is refused there, the new one served.
    const later = await startServer(binaryServe(db), {
      env: { ...process.env, LD_PRELOAD: libfaketime(), FAKETIME: "+65s" },
    });
    const refused = await client(later.url, oldKey)("/v1/pets?limit=1");
    expect(refused.status).toBe(401);
    expect((await client(later.url, rolled.key)("/v1/pets?limit=1")).status).toBe(200);
    // Meanwhile, on the server at the real time, the old secret still works.
    expect((await client(server.url, oldKey)("/v1/pets?limit=1")).status).toBe(200);
  });
});

describe("a key past its expiry", () => {
  /** The message of one request with `key` to a server started at `FAKETIME` (libfaketime's offset from now). */
  async function answerAt(db: string, key: string, offset: string): Promise<[number, string]> {
    const server = await startServer(binaryServe(db), {
      env: { ...process.env, LD_PRELOAD: libfaketime(), FAKETIME: offset },
    });
    try {
      const response = await client(server.url, key)("/v1/pets?limit=1");
      return [response.status, ((await response.json()) as { message: string }).message];
    } finally {
      await stopProcess(server.child, "SIGTERM");
    }
  }

  it("keeps saying it expired, a minute and a day after, and a revoked one that it was revoked", async () => {
    const db = tempDatabaseUrl();
    const expiresAt = new Date(Date.now() + 30_000).toISOString();
    const { key } = await createKey(db, ["--plan", "free", "--expires", expiresAt]);
    const { key: revoked, id } = await createKey(db, ["--plan", "free"]);
    await petstore(["keys", "revoke", id, "--db", db]);
    for (const offset of ["+90s", "+1d"])
      expect(await answerAt(db, key, offset), offset).toEqual([401, "The API key has expired"]);
    expect(await answerAt(db, revoked, "+0s")).toEqual([401, "The API key has been revoked"]);
  });
});

describe("the CLI on a fresh machine", () => {
  it("makes the database for the first admin token, saying where, and records the process's user when USER is unset", async () => {
    const db = tempDatabaseUrl();
    const { USER: _user, LOGNAME: _logname, ...env } = process.env;
    const made = await cli(["admin-tokens", "create", "--db", db], { env });
    expect(made.code).toBe(0);
    expect(made.stdout.split("\n")[1]).toMatch(
      /^Stored in a new database, \/\S+\/petstore\.db: there was none at that path\./,
    );
    const [entry] = await petstore(["audit", "--db", db, "--json"]);
    expect(entry.actor.who).toBe(`cli:${userInfo().username}@${hostname()}`);
  });
});
