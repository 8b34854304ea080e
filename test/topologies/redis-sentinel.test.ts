import { bucketOf } from "../_support/key-buckets.js";
import { redisLimiter } from "@petstore/adapters/redis";
import { StorageUnavailableError } from "@petstore/core";
import { rateLimiterContract } from "@petstore/core/testing";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type RedisSentinels,
  SENTINEL_DOWN_AFTER_MS,
  SENTINEL_MASTER_NAME,
  startRedisSentinels,
} from "../_support/redis-sentinel.js";
import { ensureBinary } from "../e2e/_binary.js";
import {
  binaryServe,
  cleanUp,
  createKey,
  type Server,
  startServer,
  stopProcess,
  tempDatabaseUrl,
  waitFor,
} from "../e2e/_processes.js";
import { limiterLoad } from "./_limiter-load.js";

/**
 * The limits in Redis behind Sentinel: one master, one replica, three sentinels. The library
 * (over ioredis's sentinel client, as a team would hand it in) and the binary (`--limiter
 * redis+sentinel://...`) follow a failover asked of the sentinels (`SENTINEL FAILOVER`), then
 * the master killed (SIGKILL), without a restart: 503s with the contract's headers within the
 * limiter's timeout in between (admissions under --limiter-fail-open), service resumed by
 * itself, and the admissions each failover added measured, with fresh keys for each.
 */

const PER_DAY = 150;
/** Admissions a master may take between the test's read of its replica's lag and its kill. */
const IN_FLIGHT_BOUND = 10;
const LIMITER_TIMEOUT_MS = 1_000;

let sentinels: RedisSentinels;
let db: string;
let closed: Server;
let open: Server;
const clients: Redis[] = [];
let closing = false;
/** How often a library client ended by itself and was connected again. */
let libraryRestarts = 0;

/** ioredis on the master the sentinels name, set up as packages/adapters/README.md says. */
function sentinelClient(): Redis {
  const redis = new Redis({
    sentinels: sentinels.sentinelPorts.map((port) => ({ host: "127.0.0.1", port })),
    name: SENTINEL_MASTER_NAME,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    failoverDetector: true,
    reconnectOnError: (error) => /^READONLY/.test(error.message),
  });
  redis.on("error", () => {});
  // ioredis can end a sentinel client by itself in a failover: connect it again.
  redis.on("end", () =>
    setTimeout(() => {
      if (closing || redis.status !== "end") return;
      libraryRestarts++;
      redis.connect().catch(() => {});
    }, 1_000),
  );
  clients.push(redis);
  return redis;
}

beforeAll(async () => {
  ensureBinary();
  sentinels = await startRedisSentinels();
  db = tempDatabaseUrl();
  for (const port of sentinels.dataPorts) {
    const redis = new Redis(port, "127.0.0.1");
    redis.on("error", () => {});
    clients.push(redis);
    direct.set(port, redis);
  }
  [closed, open] = await Promise.all([
    startServer([...binaryServe(db), "--limiter", sentinels.url]),
    startServer([...binaryServe(db), "--limiter", sentinels.url, "--limiter-fail-open"]),
  ]);
}, 120_000);

afterAll(async () => {
  closing = true;
  for (const client of clients) client.disconnect();
  await cleanUp();
  await sentinels?.stop();
});

let fixtures = 0;
let contractClient: Redis | undefined;
rateLimiterContract("redis behind sentinel via ioredis", async (clock) => {
  const redis = (contractClient ??= sentinelClient());
  if (redis.status !== "ready") await new Promise((resolve) => redis.once("ready", resolve));
  return {
    limiter: redisLimiter({
      send: (args) => redis.call(args[0]!, ...args.slice(1)),
      prefix: `sentinel:${++fixtures}:`,
      clock,
    }),
  };
});

/** Hits of one bucket straight through redisLimiter over a sentinel client, 3 at a time, tallied. */
function libraryLoad(bucket: string) {
  const redis = sentinelClient();
  const limiter = redisLimiter({
    send: (args) => redis.call(args[0]!, ...args.slice(1)),
    prefix: "library:",
    timeoutMs: LIMITER_TIMEOUT_MS,
  });
  const tally = { admitted: 0, refused: 0, unavailable: 0, slowestMs: 0, other: [] as string[], lastError: "" };
  let stopping = false;
  const hitter = async () => {
    while (!stopping) {
      const began = performance.now();
      try {
        const decision = await limiter.hit({
          bucket,
          windows: [
            { name: "minute", limit: 1_000_000, seconds: 60 },
            { name: "day", limit: PER_DAY, seconds: 86_400 },
          ],
          ban: { threshold: 1_000_000, seconds: 600 },
        });
        if (decision.allowed) tally.admitted++;
        else tally.refused++;
      } catch (error) {
        if (error instanceof StorageUnavailableError) {
          tally.unavailable++;
          tally.lastError = `${String((error as Error & { cause?: unknown }).cause ?? error)} (status ${redis.status})`;
        } else tally.other.push(String(error));
        // As a server's client told to retry later: not at once.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      tally.slowestMs = Math.max(tally.slowestMs, performance.now() - began);
    }
  };
  const hitters = [hitter(), hitter(), hitter()];
  return {
    tally,
    stop: async () => {
      stopping = true;
      await Promise.all(hitters);
    },
  };
}

/**
 * Runs the binary's load (key A on the fail-closed server, D on the fail-open one) and the
 * library's, waits until A and the library had `before` admissions, runs `fault`, and goes on
 * until both are past their limit. Returns what each got and how many were admitted while the
 * fault ran (the most a failover can lose: what the old master took after the new one was chosen).
 */
async function underLoad(name: string, before: number, fault: (keyId: string, bucket: string) => Promise<unknown>) {
  const limits = ["--plan", "free", "--per-minute", "100000", "--per-day", String(PER_DAY)];
  const [a, d] = [await createKey(db, limits), await createKey(db, limits)];
  const library = libraryLoad(`key:${name}`);
  const load = limiterLoad([
    { name: "A", url: closed.url, key: a.key, workers: 3 },
    { name: "D", url: open.url, key: d.key, workers: 2 },
  ]);
  /** What each side got, and what the fail-closed server said of its limiter: why a wait did not end. */
  const tallies = () => {
    const said = [...closed.stdout, ...closed.stderr].filter((line) => line.includes('"event":"limiter'));
    return `A ${JSON.stringify(load.tally("A"))}; library ${JSON.stringify(library.tally)}; the server said:\n${said.slice(-8).join("\n")}`;
  };
  let faultMs = 0;
  let during = { binary: 0, library: 0 };
  try {
    await waitFor(() => load.tally("A").admitted >= before && library.tally.admitted >= before, 30_000, {
      what: `${before} admissions before the fault`,
    });
    const at = { binary: load.tally("A").admitted, library: library.tally.admitted };
    const began = load.mark();
    await fault(a.id, `key:${name}`);
    faultMs = performance.now() - began;
    during = { binary: load.tally("A").admitted - at.binary, library: library.tally.admitted - at.library };
    await waitFor(() => load.tally("A").refused >= 5 && library.tally.refused >= 5, 30_000, {
      what: () => `A and the library's bucket past their limit (${tallies()})`,
    });
    await waitFor(() => load.tally("D").firstAdmittedAfterMark !== undefined, 30_000, {
      what: "D admitted after the fault",
    });
  } finally {
    await Promise.all([load.stop(), library.stop()]);
  }
  const [ta, td] = [load.tally("A"), load.tally("D")];
  console.info(
    `redis sentinel, ${name} (down-after ${SENTINEL_DOWN_AFTER_MS} ms), done in ${Math.round(faultMs)} ms: ` +
      `binary A admitted ${ta.admitted} of ${PER_DAY} (extra ${ta.admitted - PER_DAY}; ${during.binary} while the fault ran; 503s ${ta.unavailable}, slowest ${Math.round(ta.slowestMs)} ms); ` +
      `library ${library.tally.admitted} of ${PER_DAY} (extra ${library.tally.admitted - PER_DAY}; ${during.library} while the fault ran; unavailable ${library.tally.unavailable}, slowest ${Math.round(library.tally.slowestMs)} ms); ` +
      `fail-open D: ${td.admitted} admitted, ${td.unavailable} 503s; ` +
      `clients ended by ioredis and connected again so far: library ${libraryRestarts}, server ${closed.stderr.filter((line) => line.includes("limiter connecting again")).length}`,
  );
  expect(load.problems).toEqual([]);
  expect(library.tally.other).toEqual([]);
  for (const slowest of [ta.slowestMs, td.slowestMs, library.tally.slowestMs])
    expect(slowest).toBeLessThan(LIMITER_TIMEOUT_MS + 1_500);
  expect(td.unavailable).toBe(0);
  return { binary: ta.admitted - PER_DAY, library: library.tally.admitted - PER_DAY, during };
}

/** A connection to each data node, opened before any fault so that reading it costs one round trip. */
const direct = new Map<number, Redis>();

/** The counts in `fields` ([key, field]) on the Redis at `port` (0 for none). */
function countsOn(port: number, fields: [string, string][]): Promise<number[]> {
  const redis = direct.get(port)!;
  return Promise.all(fields.map(async ([key, field]) => Number((await redis.hget(key, field)) ?? 0)));
}

describe("the limits in Redis behind Sentinel (1 master, 1 replica, 3 sentinels)", () => {
  it("says at start that it follows the sentinels", () => {
    expect(JSON.parse(closed.stdout.find((line) => line.includes('"event":"listening"'))!).limiter).toBe(sentinels.url);
  });

  it("follows SENTINEL FAILOVER without a restart; what the old master took after the new one was chosen is lost", async () => {
    const extra = await underLoad("sentinel-failover", 40, () => sentinels.failover());
    // Never more than what was admitted while the failover ran: nothing outside it is lost.
    expect(extra.binary).toBeLessThanOrEqual(extra.during.binary);
    expect(extra.library).toBeLessThanOrEqual(extra.during.library);
    // The old master must be a replica in sync before it can take over again.
    await sentinels.synced();
  }, 60_000);

  it("follows a killed master without a restart, losing at most what was not yet replicated", async () => {
    let behind = { binary: 0, library: 0 };
    const extra = await underLoad("master-killed", 40, async (keyId, bucket) => {
      // What the replica lacks the moment before the kill: the counts the master took and had not yet sent it.
      const master = (await sentinels.master())!;
      const replica = sentinels.dataPorts.find((port) => port !== master)!;
      // The replica first: read together, a replica read later could hold more than the master's earlier read.
      const counted: [string, string][] = [
        [`petstore:limit:${bucketOf(keyId)}`, "c2"],
        [`library:{${bucket}}`, "c2"],
      ];
      const onReplica = await countsOn(replica, counted);
      const onMaster = await countsOn(master, counted);
      behind = { binary: onMaster![0]! - onReplica![0]!, library: onMaster![1]! - onReplica![1]! };
      await sentinels.killMaster(master);
    });
    console.info(
      `redis sentinel, master-killed: the replica lacked ${behind.binary} of A's and ${behind.library} of the library's counts just before the kill`,
    );
    // Lost: what had not reached the replica, and what the master took in the moment between that read and the kill.
    expect(extra.binary).toBeLessThanOrEqual(behind.binary + IN_FLIGHT_BOUND);
    expect(extra.library).toBeLessThanOrEqual(behind.library + IN_FLIGHT_BOUND);
  }, 60_000);

  it("stops with exit 0 on SIGTERM", async () => {
    const exits = await Promise.all([closed, open].map((server) => stopProcess(server.child, "SIGTERM")));
    expect(exits).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
  });
});
