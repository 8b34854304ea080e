import { bucketOf } from "../_support/key-buckets.js";
import { Redis } from "ioredis";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usePostgresDatabases } from "../_support/postgres-database.js";
import { type RedisServer, startRedis } from "../_support/redis-server.js";
import { ensureBinary, ROOT } from "./_binary.js";
import { client } from "./_http.js";
import {
  binaryServe,
  cleanUp,
  cli,
  createKey,
  freePort,
  startServer,
  stopProcess,
  tempDatabaseUrl,
  waitFor,
} from "./_processes.js";

/**
 * `petstore serve --limiter redis://...` against a real redis-server: the limits live in Redis
 * (the store stays in the libSQL file), and the server rides out Redis failing, hanging and
 * coming back.
 */
let redis: RedisServer;
let admin: Redis;
const postgresDatabases = usePostgresDatabases();

beforeAll(async () => {
  ensureBinary();
  redis = await startRedis();
  admin = new Redis(redis.url, { retryStrategy: () => 50 });
  admin.on("error", () => {});
}, 120_000);

afterAll(async () => {
  admin?.disconnect();
  await cleanUp();
  await redis?.stop();
});

/** A fresh database with one key of `perMinute` requests, served with the limits in Redis. */
async function serveOnRedis(perMinute: number, env: NodeJS.ProcessEnv = {}, flags: string[] = []) {
  const db = tempDatabaseUrl();
  const { key, id } = await createKey(db, [
    "--plan",
    "enterprise",
    "--per-minute",
    String(perMinute),
    "--per-day",
    "100000",
  ]);
  // PETSTORE_LIMITER in `env` names Redis instead of the flag.
  const limiter = env.PETSTORE_LIMITER === undefined ? ["--limiter", redis.url] : [];
  const server = await startServer([...binaryServe(db), ...limiter, ...flags], { env: { ...process.env, ...env } });
  return { server, api: client(server.url, key), keyId: id };
}

const rateHeaders = (response: Response) => ({
  limit: response.headers.get("x-ratelimit-limit"),
  remaining: response.headers.get("x-ratelimit-remaining"),
  retryAfter: response.headers.get("retry-after"),
});

/** Resolves once Redis answers again (after a restart). */
async function redisBack(): Promise<void> {
  await redis.restart();
  if (admin.status !== "ready") await new Promise((resolve) => admin.once("ready", resolve));
}

/** GETs until one is answered 200 (the server reconnected by itself); at most `ms`. */
async function until200(api: ReturnType<typeof client>, ms = 15_000): Promise<Response> {
  let last: Response | undefined;
  await waitFor(async () => (last = await api("/v1/pets")).status === 200, ms, {
    every: 100,
    what: () => `a 200 (last ${last?.status})`,
  });
  return last!;
}

describe("petstore serve --limiter redis://", () => {
  it("counts every request in Redis, under the key's bucket, and refuses past the limit", async () => {
    const { server, api, keyId } = await serveOnRedis(5);
    const statuses = [];
    for (let i = 0; i < 7; i++) statuses.push((await api("/v1/pets")).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(await admin.exists(`petstore:limit:${bucketOf(keyId)}`)).toBe(1);
    expect(await admin.hget(`petstore:limit:${bucketOf(keyId)}`, "c1")).toBe("5");
    expect(server.stdout.find((line) => line.includes('"event":"listening"'))).toContain(`"limiter":"${redis.url}"`);
    await stopProcess(server.child, "SIGTERM");
  }, 60_000);

  it("answers 503 with Retry-After and rate-limit headers while Redis is down, /healthz says so, and recovers by itself", async () => {
    const { server, api } = await serveOnRedis(1_000);
    expect((await api("/v1/pets")).status).toBe(200);
    await redis.kill();
    try {
      const down = await api("/v1/pets");
      expect(down.status).toBe(503);
      expect(rateHeaders(down)).toEqual({ limit: "1000", remaining: "0", retryAfter: "1" });
      expect((await api("/v1/pets", { method: "POST", json: { name: "Rex", categoryId: 1 } })).status).toBe(503);
      const health = await fetch(new URL("/healthz", server.url));
      expect(health.status).toBe(503);
    } finally {
      await redisBack();
    }
    const back = await until200(api);
    expect(back.headers.get("x-ratelimit-limit")).toBe("1000");
    await waitFor(() => server.stderr.some((line) => line.includes('"event":"limiter connection lost"')));
    // A restart is the outage itself: lost and back, nothing about refusals.
    expect(server.stderr.filter((line) => /limiter (reconnect refused|refusing commands)/.test(line))).toEqual([]);
    await stopProcess(server.child, "SIGTERM");
  }, 60_000);

  it("answers every request within PETSTORE_LIMITER_TIMEOUT_MS while Redis is stopped (SIGSTOP)", async () => {
    const { server, api } = await serveOnRedis(1_000, { PETSTORE_LIMITER_TIMEOUT_MS: "300" });
    expect((await api("/v1/pets")).status).toBe(200);
    redis.signal("SIGSTOP");
    try {
      // A hung Redis never answers: only the timeout can settle these.
      const answers = await Promise.all(Array.from({ length: 10 }, () => api("/v1/pets")));
      expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(503));
      expect(answers.every((answer) => answer.headers.get("retry-after") === "1")).toBe(true);
    } finally {
      redis.signal("SIGCONT");
    }
    await until200(api);
    await stopProcess(server.child, "SIGTERM");
  }, 60_000);

  it("admits without limits under --limiter-fail-open while Redis is down, logging it, with /healthz 200 and a notice", async () => {
    const { server, api } = await serveOnRedis(2, { PETSTORE_LIMITER_TIMEOUT_MS: "300" }, ["--limiter-fail-open"]);
    expect((await api("/v1/pets")).status).toBe(200);
    await redis.kill();
    try {
      for (let i = 0; i < 5; i++) expect((await api("/v1/pets")).status).toBe(200);
      await waitFor(() => server.stderr.some((line) => line.includes('"event":"limiter failing open"')));
      const health = await fetch(new URL("/healthz", server.url));
      expect(health.status).toBe(200);
      expect(((await health.json()) as { notice?: string }).notice).toMatch(/admitted without rate limits/);
    } finally {
      await redisBack();
    }
    // Redis came back empty: once the server reconnected, the limits hold again from zero.
    await waitFor(() => server.stderr.some((line) => line.includes('"event":"limiter reconnected"')), 15_000);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await api("/v1/pets")).status);
    expect(statuses).toEqual([200, 200, 429]);
    await stopProcess(server.child, "SIGTERM");
  }, 60_000);

  it("logs each fail-open outage as two lines, the last counting the requests of that outage only", async () => {
    const { server, api } = await serveOnRedis(1_000, { PETSTORE_LIMITER_TIMEOUT_MS: "300" }, ["--limiter-fail-open"]);
    const lines = (event: string) =>
      server.stderr
        .map((line) => JSON.parse(line) as { event?: string; admittedWithoutLimit?: number })
        .filter((line) => line.event === event);
    const reconnects = () => lines("limiter reconnected").length;
    expect((await api("/v1/pets")).status).toBe(200);
    // The second outage's first line said 150 (the first outage's), or nothing.
    for (const [outage, requests] of [
      [1, 150],
      [2, 7],
    ] as const) {
      // Counted before the outage: the server may reconnect before redisBack() returns.
      const reconnected = reconnects();
      await redis.kill();
      try {
        for (let i = 0; i < requests; i++) expect((await api("/v1/pets")).status).toBe(200);
      } finally {
        await redisBack();
      }
      await waitFor(() => reconnects() > reconnected, 15_000);
      // The first request Redis answers again ends the outage (said once Redis has answered for a second).
      expect((await api("/v1/pets")).status).toBe(200);
      await waitFor(() => lines("limiter no longer failing open").length === outage);
      expect(lines("limiter failing open")).toHaveLength(outage);
      expect(lines("limiter no longer failing open").at(-1)?.admittedWithoutLimit).toBe(requests);
    }
    await stopProcess(server.child, "SIGTERM");
  }, 90_000);

  it("measures a fail-open outage by the requests' own outcomes: one pair of lines for 3.8 s of OOM, however often /healthz reads Redis's TIME", async () => {
    const { server, api } = await serveOnRedis(100_000, {}, ["--limiter-fail-open"]);
    const lines = (event: string) =>
      server.stderr
        .map((line) => JSON.parse(line) as { event?: string; outageMs?: number; admittedWithoutLimit?: number })
        .filter((line) => line.event === event);
    let running = true;
    const statuses: number[] = [];
    // Requests every 50 ms, and probes of /healthz (which Redis answers under OOM) every 100 ms.
    const load = (async () => {
      while (running) {
        statuses.push((await api("/v1/pets?limit=1")).status);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const probes = (async () => {
      while (running) {
        await (await fetch(new URL("/healthz", server.url))).body?.cancel();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    await waitFor(() => statuses.length > 5);
    // Redis refuses every write (a script included) while it is over maxmemory: OOM, at once.
    await admin.config("SET", "maxmemory", "1");
    await new Promise((resolve) => setTimeout(resolve, 3_800));
    await admin.config("SET", "maxmemory", "0");
    await waitFor(() => lines("limiter no longer failing open").length > 0, 10_000);
    running = false;
    await Promise.all([load, probes]);
    const [lost, back] = [lines("limiter failing open"), lines("limiter no longer failing open")];
    console.info(
      `a fail-open outage of 3.8 s (OOM) under /healthz probes: ${lost.length} 'failing open' and ${back.length} 'no longer failing open' line, outageMs ${back[0]?.outageMs}, admittedWithoutLimit ${back[0]?.admittedWithoutLimit}; ${statuses.length} requests, all ${[...new Set(statuses)].join(", ")}`,
    );
    expect(lost).toHaveLength(1);
    expect(back).toHaveLength(1);
    expect(Math.abs(back[0]!.outageMs! - 3_800)).toBeLessThanOrEqual(500);
    expect(back[0]!.admittedWithoutLimit).toBeGreaterThan(0);
    expect(new Set(statuses)).toEqual(new Set([200]));
    await stopProcess(server.child, "SIGTERM");
  }, 60_000);

  it("lifts a ban when Redis loses its data (FLUSHALL, a restart without persistence), as documented, and logs that it did", async () => {
    // Two a minute: the 3rd to 33rd requests are refused, the 34th bans the key for 600 s.
    const { server, api } = await serveOnRedis(2);
    const codes = [];
    for (let i = 0; i < 34; i++)
      codes.push(((await (await api("/v1/pets?limit=1")).json()) as { code?: string }).code ?? "ok");
    expect(codes.at(-1)).toBe("temporarily_banned");
    expect(((await (await api("/v1/pets?limit=1")).json()) as { code?: string }).code).toBe("temporarily_banned");
    const lost = () => server.stderr.filter((line) => line.includes('"event":"limiter data lost"')).length;
    // The ban went with the data, and nothing said so.
    await admin.flushall();
    expect((await api("/v1/pets?limit=1")).status).toBe(200);
    expect((await fetch(new URL("/healthz", server.url))).status).toBe(200);
    expect(lost()).toBe(1);
    // A restart without persistence: noticed when the server reconnects.
    await redis.kill();
    await redisBack();
    await waitFor(() => lost() === 2, 15_000);
    expect((await until200(api)).headers.get("x-ratelimit-remaining")).toBe("1");
    await stopProcess(server.child, "SIGTERM");
  }, 60_000);

  it("takes the password from PETSTORE_LIMITER_PASSWORD or the URL and never prints it", async () => {
    await admin.config("SET", "requirepass", "s3cret-pw");
    try {
      const authed = new URL(redis.url);
      authed.password = "s3cret-pw";
      const { server, api } = await serveOnRedis(10, { PETSTORE_LIMITER: authed.toString() }, []);
      expect((await api("/v1/pets")).status).toBe(200);
      await stopProcess(server.child, "SIGTERM");
      expect([...server.stdout, ...server.stderr].join("\n")).not.toContain("s3cret-pw");

      const db = tempDatabaseUrl();
      const wrong = await cli(["serve", "--host", "127.0.0.1", "--port", "0", "--db", db, "--limiter", redis.url], {
        env: { ...process.env, PETSTORE_LIMITER_PASSWORD: "wrong-pw" },
      });
      expect(wrong.code).not.toBe(0);
      expect(wrong.stderr).toMatch(new RegExp(`cannot use limiter ${redis.url}: .*(WRONGPASS|invalid)`, "i"));
      expect(wrong.stderr + wrong.stdout).not.toContain("wrong-pw");
    } finally {
      await admin.config("SET", "requirepass", "");
    }
  }, 60_000);

  it("names Redis's own reason in the log and /healthz when it refuses commands (OOM) or a reconnect (WRONGPASS), and says when it answers again", async () => {
    await admin.config("SET", "requirepass", "first-pw");
    const { server, api } = await serveOnRedis(1_000, { PETSTORE_LIMITER_PASSWORD: "first-pw" }).finally(() =>
      admin.config("SET", "requirepass", ""),
    );
    expect((await api("/v1/pets")).status).toBe(200);
    const events = () => server.stderr.map((line) => JSON.parse(line) as { event?: string; reason?: string });
    const health = async () =>
      (await (await fetch(new URL("/healthz", server.url))).json()) as { status: string; reason?: string };
    // Out of memory with noeviction: Redis answers every write "OOM command not allowed...".
    await admin.config("SET", "maxmemory-policy", "noeviction");
    await admin.config("SET", "maxmemory", "1");
    try {
      expect((await api("/v1/pets")).status).toBe(503);
      expect((await api("/v1/pets")).status).toBe(503);
      expect(await health()).toMatchObject({
        status: "unavailable",
        reason: expect.stringMatching(/^OOM command not allowed/),
      });
      expect(events().filter((line) => line.event === "limiter refusing commands")).toEqual([
        expect.objectContaining({ reason: expect.stringMatching(/^OOM command not allowed/) }),
      ]);
    } finally {
      await admin.config("SET", "maxmemory", "0");
    }
    expect((await api("/v1/pets")).status).toBe(200);
    expect(events().filter((line) => line.event === "limiter answering again")).toHaveLength(1);

    // Its password changed under a running server: its reconnects are refused with WRONGPASS,
    // where ioredis's own words for the commands meanwhile were "Stream isn't writeable".
    await admin.config("SET", "requirepass", "changed-pw");
    try {
      await admin.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes");
      await waitFor(() => events().some((line) => line.event === "limiter reconnect refused"), 10_000);
      expect(events().find((line) => line.event === "limiter reconnect refused")?.reason).toMatch(/^WRONGPASS/);
      expect((await api("/v1/pets")).status).toBe(503);
      expect(await health()).toMatchObject({ status: "unavailable", reason: expect.stringMatching(/WRONGPASS/) });
    } finally {
      await admin.config("SET", "requirepass", "");
    }
    await until200(api);
    // Health says what is so now: no afterglow of the refusals once requests succeed again.
    expect(await health()).toEqual({ status: "ok" });
    expect(server.stderr.join("\n")).not.toContain("Stream isn't writeable");
    await stopProcess(server.child, "SIGTERM");
  }, 60_000);

  it("refuses to start in one line when Redis does not answer, or the URL is not redis://", async () => {
    const db = tempDatabaseUrl();
    const down = await cli([
      "serve",
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--db",
      db,
      "--limiter",
      "redis://127.0.0.1:1",
    ]);
    expect(down.code).not.toBe(0);
    expect(down.stderr.trim().split("\n")).toHaveLength(1);
    expect(down.stderr).toMatch(/cannot use limiter redis:\/\/127\.0\.0\.1:1: /);
    const typo = await cli(["serve", "--db", db, "--limiter", "http://user:pw@host"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/--limiter must be redis:\/\/HOST/);
    expect(typo.stderr).not.toContain("pw@");
  }, 60_000);

  it("refuses a database index other than 0..15 in the URL with a usage error (exit 2), and counts in the one it names", async () => {
    const db = tempDatabaseUrl();
    // /99 and /abc used to mean database 0, in silence.
    for (const [path, shown] of [
      ["/99", "99"],
      ["/abc", "abc"],
      ["/-1", "-1"],
      ["/1/2", "1/2"],
    ] as const) {
      const refused = await cli([
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--db",
        db,
        "--limiter",
        `${redis.url}${path}`,
      ]);
      expect({ path, code: refused.code }).toEqual({ path, code: 2 });
      expect(refused.stderr.split("\n")[0]).toBe(
        `petstore: --limiter's database must be a whole number from 0 to 15 (redis://HOST:PORT/DB), not '${shown}'`,
      );
    }
    const { key, id } = await createKey(db, ["--plan", "enterprise", "--per-minute", "5", "--per-day", "100"]);
    const server = await startServer([...binaryServe(db), "--limiter", `${redis.url}/3`]);
    expect((await client(server.url, key)("/v1/pets")).status).toBe(200);
    const inThree = new Redis(`${redis.url}/3`);
    try {
      expect(await inThree.hget(`petstore:limit:${bucketOf(id)}`, "c1")).toBe("1");
      expect(await admin.exists(`petstore:limit:${bucketOf(id)}`)).toBe(0);
    } finally {
      inThree.disconnect();
    }
    await stopProcess(server.child, "SIGTERM");
  }, 90_000);

  it("runs under Deno, which needs an unrestricted --allow-env for the Redis client and Redis in --allow-net", async () => {
    const db = tempDatabaseUrl("deno.db");
    const { key, id } = await createKey(db, ["--plan", "enterprise", "--per-minute", "3", "--per-day", "100"]);
    const port = await freePort();
    const deno = [
      join(ROOT, "node_modules/.bin/deno"),
      "run",
      "--sloppy-imports",
      "--node-modules-dir=manual",
      "--conditions=@petstore/source",
      "--allow-env",
      "--allow-sys=cpus,networkInterfaces,hostname",
      "--allow-ffi=node_modules/@libsql/linux-x64-gnu/index.node",
      "--allow-read",
      "--allow-write",
      `--allow-net=127.0.0.1:${port},127.0.0.1:${redis.port}`,
      "packages/server/src/main.ts",
      "serve",
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "--db",
      db,
    ];
    const server = await startServer(deno, {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: "1", PETSTORE_LIMITER: redis.url },
    });
    const api = client(server.url, key);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await api("/v1/pets")).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(await admin.hget(`petstore:limit:${bucketOf(id)}`, "c1")).toBe("3");
    expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });
  }, 90_000);
});

/**
 * Two servers on one database, one with --limiter redis:// and one without,
 * admitted 120 of 200 requests of a key limited to 60, without a word.
 */
describe.each([
  ["a libSQL file", async () => tempDatabaseUrl()],
  ["PostgreSQL", () => postgresDatabases.create("modes")],
])("servers on %s that would keep the limits in different places", (_, newDatabase) => {
  it("refuse to start in one line naming the difference, until --change-limiter switches the database over", async () => {
    const db = await newDatabase();
    const { key } = await createKey(db, ["--plan", "enterprise", "--per-minute", "60", "--per-day", "100000"]);
    const inDatabase = await startServer(binaryServe(db));
    const serve = ["serve", "--host", "127.0.0.1", "--port", "0", "--db", db];
    const split = await cli([...serve, "--limiter", redis.url]);
    expect(split.code).toBe(1);
    expect(split.stderr.trim().split("\n")).toEqual([
      "petstore: this server would keep the rate limits in Redis (--limiter), but the servers of this database keep them in the database: the two would split every key's limits. Start it the way the others run, or with --change-limiter to switch the database over (then restart the others the new way)",
    ]);
    // The first server counts every request of the key, alone.
    const statuses = await Promise.all(
      Array.from({ length: 100 }, async () => (await client(inDatabase.url, key)("/v1/pets?limit=1")).status),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(60);
    await stopProcess(inDatabase.child, "SIGTERM");

    // Switching over is said, and from then on the database's servers are the ones on Redis.
    const onRedis = await startServer([...binaryServe(db), "--limiter", redis.url, "--change-limiter"]);
    expect(onRedis.stdout.map((line) => JSON.parse(line) as { event?: string })).toContainEqual(
      expect.objectContaining({ event: "limiter changed", limiter: "redis", was: "database" }),
    );
    const another = await startServer([...binaryServe(db), "--limiter", redis.url]);
    const old = await cli(serve);
    expect(old.code).toBe(1);
    expect(old.stderr).toContain(
      "petstore: this server would keep the rate limits in the database, but the servers of this database keep them in Redis (--limiter)",
    );
    await Promise.all([onRedis, another].map((server) => stopProcess(server.child, "SIGTERM")));
  }, 90_000);
});
