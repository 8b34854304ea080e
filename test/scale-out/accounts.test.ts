import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usePostgresDatabases } from "../_support/postgres-database.js";
import { type RedisCluster, startRedisCluster } from "../_support/redis-cluster.js";
import { type RedisServer, startRedis } from "../_support/redis-server.js";
import { ensureBinary } from "../e2e/_binary.js";
import { client } from "../e2e/_http.js";
import { binaryServe, cleanUp, cli, createKey, type Server, startServer, stopProcess } from "../e2e/_processes.js";

/**
 * An account's plan counts across its keys, exactly, across servers: three binaries on one
 * PostgreSQL, counting in one Redis, in a Redis Cluster, then in the database, take requests of an account's
 * keys spread over them all. A Free account with three keys is admitted 60 of 300 requests in a
 * minute; a key capped at 10 a minute inside a Pro account, 10.
 */

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);
const databases = usePostgresDatabases();

let redis: RedisServer;
let cluster: RedisCluster;
beforeAll(async () => {
  [redis, cluster] = await Promise.all([startRedis(), startRedisCluster()]);
}, 120_000);
afterAll(async () => {
  await Promise.all([redis?.stop(), cluster?.stop()]);
});

/** What a run of requests got: admissions, and the minute windows they fell in (`X-RateLimit-Reset`). */
interface Run {
  admitted: number;
  refused: number;
  /** Refusals of a banned key (past 30 refusals within a minute): the key's ban, not the account's. */
  banned: number;
  windows: Set<string>;
  limits: Set<string>;
  policies: Set<string>;
}

describe.each([
  { limiter: "Redis", flags: () => ["--limiter", redis.url] },
  { limiter: "Redis Cluster", flags: () => ["--limiter", cluster.url] },
  { limiter: "PostgreSQL itself", flags: () => [] },
])("three servers on PostgreSQL counting in $limiter", ({ flags }) => {
  let db: string;
  let servers: Server[] = [];

  beforeAll(async () => {
    db = await databases.create("accounts");
    servers = await Promise.all(Array.from({ length: 3 }, () => startServer([...binaryServe(db), ...flags()])));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(servers.map((server) => stopProcess(server.child, "SIGTERM")));
  });

  // biome-ignore lint/suspicious/noExplicitAny: the printed JSON
  const json = async (args: string[]): Promise<any> => {
    const result = await cli([...args, "--db", db, "--json"]);
    if (result.code !== 0) throw new Error(`petstore ${args.join(" ")}: ${result.stderr}`);
    return JSON.parse(result.stdout);
  };

  /** `count` requests spread over `keys` and the three servers, 30 at a time. */
  async function spread(keys: string[], count: number): Promise<Run> {
    const run: Run = { admitted: 0, refused: 0, banned: 0, windows: new Set(), limits: new Set(), policies: new Set() };
    for (let sent = 0; sent < count; sent += 30) {
      const answers = await Promise.all(
        Array.from({ length: Math.min(30, count - sent) }, (_, i) =>
          client(servers[(sent + i) % 3]!.url, keys[(sent + i) % keys.length]!)("/v1/pets?limit=1"),
        ),
      );
      for (const answer of answers) {
        if (answer.status === 429) {
          run.refused++;
          const { code } = (await answer.json()) as { code: string };
          if (code === "temporarily_banned") run.banned++;
          continue;
        }
        if (answer.status !== 200) throw new Error(`unexpected ${answer.status}: ${await answer.text()}`);
        run.admitted++;
        // The minute window the admission counted in (a ban's answers report the ban's end).
        run.windows.add(answer.headers.get("x-ratelimit-reset")!);
        run.limits.add(answer.headers.get("x-ratelimit-limit")!);
        run.policies.add(answer.headers.get("ratelimit-policy")!);
        await answer.body?.cancel();
      }
    }
    return run;
  }

  /**
   * A run on keys made fresh for it, inside one minute window: a run that a minute's turn cut
   * in two (each half its own 60) is made again, on new keys, once.
   */
  async function inOneMinute(make: () => Promise<string[]>, count: number): Promise<Run> {
    for (let attempt = 1; ; attempt++) {
      const run = await spread(await make(), count);
      if (run.windows.size === 1 || attempt === 2) return run;
    }
  }

  it("admits exactly 60 of 300 requests spread over a Free account's three keys", async () => {
    const run = await inOneMinute(async () => {
      const account = await json(["accounts", "create", "--name", "Free shop", "--plan", "free"]);
      const keys = [];
      for (let i = 0; i < 3; i++) keys.push((await json(["keys", "create", "--account", account.id])).key as string);
      return keys;
    }, 300);
    console.log(
      `accounts figure: Free account, 3 keys, 3 servers: ${run.admitted} of 300 admitted, ${run.banned} refused as banned`,
    );
    expect(run.windows.size).toBe(1);
    expect([run.admitted, run.refused]).toEqual([60, 240]);
    expect([...run.limits]).toEqual(["60"]);
  });

  it("admits exactly 10 of 60 requests of a key capped at 10 a minute inside a Pro account", async () => {
    const run = await inOneMinute(async () => {
      const account = await json(["accounts", "create", "--name", "Pro shop", "--plan", "pro"]);
      return [(await json(["keys", "create", "--account", account.id, "--per-minute", "10"])).key as string];
    }, 60);
    console.log(
      `accounts figure: key capped at 10 in a Pro account, 3 servers: ${run.admitted} of 60 admitted, ${run.banned} refused as banned`,
    );
    expect(run.windows.size).toBe(1);
    expect([run.admitted, run.refused]).toEqual([10, 50]);
    // The binding bucket is the key's: its cap, and its policy.
    expect([...run.limits]).toEqual(["10"]);
    expect([...run.policies]).toEqual(['"minute";q=10;w=60, "day";q=10000;w=86400']);
  });

  it("counts a key made alone in an account of its own, as before accounts", async () => {
    const { key } = await createKey(db, ["--plan", "free"]);
    const run = await spread([key], 3);
    expect([run.admitted, [...run.limits]]).toEqual([3, ["60"]]);
  });
});
