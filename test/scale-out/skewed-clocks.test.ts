import { accountBucketOf, bucketOf } from "../_support/key-buckets.js";
import { Redis } from "ioredis";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { libfaketime, type SteppedWallClock, steppedWallClock } from "../_support/libfaketime.js";
import { type PostgresServer, startPostgres } from "../_support/postgres-server.js";
import { type RedisServer, startRedis } from "../_support/redis-server.js";
import { BINARY, ensureBinary } from "../e2e/_binary.js";
import { client } from "../e2e/_http.js";
import { cleanUp, createKey, type Server, startServer, stopProcess, waitFor } from "../e2e/_processes.js";

/**
 * One clock for the fleet, from outside: three `petstore serve` processes on one
 * PostgreSQL (and again with the limits in Redis) whose clocks disagree by far more than any
 * window, moved by libfaketime: -65 s, 0 and +65 s; then one 25 h ahead, one correct and one
 * at 23:59:52 UTC of the stores' day. The stores decide every window, ban and expiry by their
 * own clock, so every server must answer as one.
 */

/** A fleet's servers: what each server's clock is off by from the stores' when it starts (seconds). */
interface Fleet {
  name: string;
  skews: (storesNow: number) => number[];
}

const MINUTE = 60_000;
const DAY = 86_400_000;
const REQUEST_TIMEOUT_MS = 5_000;

const FLEETS: Fleet[] = [
  { name: "clocks at -65 s, 0 and +65 s", skews: () => [-65, 0, 65] },
  {
    name: "one clock 25 h ahead, one correct, one at 23:59:52 UTC",
    // The last: 8 s before the end of the stores' day.
    skews: (storesNow) => [25 * 3600, 0, (Math.floor(storesNow / DAY) * DAY + DAY - 8_000 - storesNow) / 1000],
  },
];

/** The stores' clock, as the servers are started on it and a burst of requests waits for it. */
interface StoresClock {
  /** Unix ms. */
  now(): number;
  /** Seconds from this machine's clock. */
  readonly offset: number;
  /** libfaketime's settings of a process on the stores' clock (none: this machine's). */
  readonly env: Record<string, string>;
  /** Resolves at the start of a minute of the stores' clock, or with more than 10 s of it left: a burst of requests then falls in one minute window. */
  minuteAhead(): Promise<void>;
}

/**
 * The PostgreSQL of the fleets without Redis: its clock (libfaketime) starts at noon UTC of
 * today, far from the day's turn, and steps forward to a minute's start before each burst.
 */
let steppedPg: PostgresServer;
let steppedClock: SteppedWallClock;
/**
 * The PostgreSQL and Redis of the fleets with Redis, on this machine's clock: redis-server
 * cannot run under libfaketime (its allocator reads the clock while libfaketime starts, which
 * gives up), so their bursts wait for a minute with 10 s left, and PostgreSQL's clock must
 * be Redis's (a server's offset from each is checked).
 */
let pg: PostgresServer;
let redis: RedisServer;
let redisClient: Redis;

beforeAll(async () => {
  ensureBinary();
  steppedClock = steppedWallClock(Math.floor(Date.now() / DAY) * DAY + DAY / 2);
  [steppedPg, pg, redis] = await Promise.all([startPostgres({ env: steppedClock.env }), startPostgres(), startRedis()]);
  redisClient = new Redis(redis.url);
}, 120_000);

afterAll(async () => {
  redisClient?.disconnect();
  await cleanUp();
  await Promise.all([steppedPg?.destroy(), pg?.destroy(), redis?.stop()]);
  steppedClock?.remove();
});

const minuteStart = (at: number) => Math.floor(at / MINUTE) * MINUTE;

const STORES_CLOCKS: Record<"PostgreSQL" | "PostgreSQL + Redis", () => StoresClock> = {
  PostgreSQL: () => ({
    now: () => steppedClock.now(),
    get offset() {
      return steppedClock.offset;
    },
    env: steppedClock.env,
    minuteAhead: async () => steppedClock.stepForwardTo(minuteStart(steppedClock.now()) + MINUTE),
  }),
  "PostgreSQL + Redis": () => ({
    now: Date.now,
    offset: 0,
    env: {},
    async minuteAhead() {
      const left = minuteStart(Date.now()) + MINUTE - Date.now();
      if (left < 10_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
    },
  }),
};

interface Answer {
  status: number;
  code?: string;
  id?: number;
  headers: Headers;
}

for (const storage of ["PostgreSQL", "PostgreSQL + Redis"] as const) {
  for (const fleet of FLEETS) {
    describe(`three servers on ${storage}, ${fleet.name}`, () => {
      let db: string;
      let servers: Server[] = [];
      let metricsUrls: string[] = [];
      let sql: postgres.Sql;
      /** Each server's clock minus the stores', seconds, when they started. */
      let skews: number[];
      let storesClock: StoresClock;
      const limits = storage === "PostgreSQL" ? "postgres" : "redis";

      beforeAll(async () => {
        storesClock = STORES_CLOCKS[storage]();
        db = await (storage === "PostgreSQL" ? steppedPg : pg).createDatabase(
          `skew_${limits}_${FLEETS.indexOf(fleet)}`,
        );
        sql = postgres(db, { max: 2, onnotice: () => {} });
        const flags = [
          "--db",
          db,
          "--metrics-listen",
          "127.0.0.1:0",
          ...(storage === "PostgreSQL" ? [] : ["--limiter", redis.url]),
        ];
        skews = fleet.skews(storesClock.now());
        servers = await Promise.all(
          skews.map((skew) =>
            startServer([BINARY, "serve", "--host", "127.0.0.1", "--port", "0", ...flags], {
              env: {
                ...process.env,
                TZ: "UTC",
                // The correct server's clock is the stores' (steps and all); the others are off from where it started.
                ...(skew === 0
                  ? storesClock.env
                  : {
                      LD_PRELOAD: libfaketime(),
                      FAKETIME: `${storesClock.offset + skew >= 0 ? "+" : ""}${(storesClock.offset + skew).toFixed(3)}`,
                      // Timers and durations keep real time; only the wall clock (Date.now) moves.
                      FAKETIME_DONT_FAKE_MONOTONIC: "1",
                    }),
              },
            }),
          ),
        );
        metricsUrls = servers.map((server) => {
          const line = server.stdout
            .map((each) => JSON.parse(each) as { event?: string; url?: string })
            .find((entry) => entry.event === "metrics listening");
          return line!.url!;
        });
      }, 60_000);

      afterAll(async () => {
        await Promise.all(servers.map((server) => stopProcess(server.child, "SIGTERM")));
        await sql?.end();
      });

      /** One request to server `index`, bounded in time. */
      async function call(
        index: number,
        key: string,
        path: string,
        init: RequestInit & { json?: unknown } = {},
      ): Promise<Answer> {
        const response = await client(servers[index]!.url, key)(path, {
          ...init,
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        const body = (await response.json()) as { code?: string; id?: number };
        return {
          status: response.status,
          headers: response.headers,
          ...(body.code ? { code: body.code } : {}),
          ...(body.id ? { id: body.id } : {}),
        };
      }
      const everyServer = (key: string, path: string) => Promise.all([0, 1, 2].map((index) => call(index, key, path)));
      const seconds = (answer: Answer, name: string) => Number(answer.headers.get(name));

      it("runs servers whose clocks really disagree, each saying so in its log, its metrics and /healthz", async () => {
        const dates = await Promise.all(
          servers.map(async (server) =>
            Date.parse((await fetch(new URL("/healthz", server.url))).headers.get("date")!),
          ),
        );
        for (const [index, date] of dates.entries())
          expect(Math.abs(date - storesClock.now() - skews[index]! * 1000)).toBeLessThan(5_000);
        for (const [index, server] of servers.entries()) {
          const skew = skews[index]!;
          const stores = storage === "PostgreSQL" ? ["database"] : ["database", "limiter"];
          // The offset is measured just after the server starts listening: wait for its log line.
          await expect
            .poll(() => server.stderr.filter((line) => line.includes('"clock offset"')).length, { timeout: 10_000 })
            .toBe(skew === 0 ? 0 : stores.length);
          const metrics = await (await fetch(metricsUrls[index]!)).text();
          for (const store of stores) {
            const offset = Number(
              new RegExp(`petstore_clock_offset_seconds\\{store="${store}"\\} (\\S+)`).exec(metrics)?.[1],
            );
            expect(Math.abs(offset - skew)).toBeLessThan(5);
          }
          const health = (await (await fetch(new URL("/healthz", server.url))).json()) as {
            status: string;
            notice?: string;
          };
          expect(health.status).toBe("ok");
          if (skew === 0) expect(health.notice).toBeUndefined();
          else
            expect(health.notice).toMatch(
              skew > 0
                ? /this server's clock is [\d.]+ s ahead of the database's/
                : /this server's clock is [\d.]+ s behind the database's/,
            );
        }
        const line = JSON.parse(servers[0]!.stderr.find((each) => each.includes('"clock offset"'))!) as {
          level: string;
          offsetSeconds: number;
        };
        console.info(`skewed clocks, ${storage}, ${fleet.name}: first server's log: ${JSON.stringify(line)}`);
        expect(line.level).toBe("warn");
      }, 30_000);

      it("admits exactly 60 of 300 concurrent requests of one Free key over the three, then all three refuse it as banned, with the same Reset and Retry-After", async () => {
        const { key } = await createKey(db, ["--plan", "free"]);
        await storesClock.minuteAhead();
        const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => call(i % 3, key, "/v1/pets?limit=1")));
        const admitted = answers.filter((answer) => answer.status === 200).length;
        const limited = answers.filter((answer) => answer.code === "rate_limited").length;
        const banned = answers.filter((answer) => answer.code === "temporarily_banned").length;
        console.info(
          `skewed clocks, ${storage}, ${fleet.name}: 300 requests of one Free key -> ${admitted} admitted, ${limited} rate_limited, ${banned} banned`,
        );
        expect({ admitted, limited, banned }).toEqual({ admitted: 60, limited: 30, banned: 210 });
        // Every admission fell in one minute window of the store: the same reset on every answer.
        expect(
          new Set(
            answers.filter((answer) => answer.status === 200).map((answer) => answer.headers.get("x-ratelimit-reset")),
          ).size,
        ).toBe(1);
        const after = await everyServer(key, "/v1/pets?limit=1");
        expect(after.map((answer) => answer.code)).toEqual([
          "temporarily_banned",
          "temporarily_banned",
          "temporarily_banned",
        ]);
        const resets = after.map((answer) => seconds(answer, "x-ratelimit-reset"));
        const retries = after.map((answer) => seconds(answer, "retry-after"));
        console.info(
          `skewed clocks, ${storage}, ${fleet.name}: banned key asked at once: X-RateLimit-Reset ${resets.join(", ")}; Retry-After ${retries.join(", ")}`,
        );
        expect(Math.max(...resets) - Math.min(...resets)).toBe(0);
        expect(Math.max(...retries) - Math.min(...retries)).toBeLessThanOrEqual(1);
        expect(Math.min(...retries)).toBeGreaterThanOrEqual(598);
        expect(Math.max(...retries)).toBeLessThanOrEqual(600);
      }, 60_000);

      it("lifts a ban on all three at the instant the store's clock ends it", async () => {
        const { id, key } = await createKey(db, ["--plan", "free"]);
        await storesClock.minuteAhead();
        await Promise.all(Array.from({ length: 100 }, (_, i) => call(i % 3, key, "/v1/pets?limit=1")));
        expect((await everyServer(key, "/v1/pets?limit=1")).map((answer) => answer.code)).toEqual([
          "temporarily_banned",
          "temporarily_banned",
          "temporarily_banned",
        ]);
        // The ban shortened in the store to end 2 s from now by the store's clock, its count and
        // its account's (made for it, counting the same requests) cleared.
        const [bucket, account] = [bucketOf(id), accountBucketOf(id)];
        let endsAt: number;
        if (storage === "PostgreSQL") {
          await sql`UPDATE rate_limits SET window0_count = 0 WHERE bucket = ${account}`;
          const [row] = await sql`
            UPDATE rate_limits SET banned_until = floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint + 2000, window0_count = 0, refusals = 0
            WHERE bucket = ${bucket} RETURNING banned_until`;
          endsAt = Number(row!.banned_until);
        } else {
          const script =
            "local t = redis.call('TIME'); local e = t[1] * 1000 + math.floor(t[2] / 1000) + 2000; redis.call('HSET', KEYS[1], 'b', e, 'c1', 0, 'r', 0); redis.call('HSET', KEYS[2], 'c1', 0); return e";
          endsAt = Number(await redisClient.eval(script, 2, `petstore:limit:${bucket}`, `petstore:limit:${account}`));
        }
        const firstAdmitted = [0, 0, 0];
        const everyServerAdmitted = async () => {
          const answers = await everyServer(key, "/v1/pets?limit=1");
          for (const [index, answer] of answers.entries()) {
            if (answer.status === 200) firstAdmitted[index] ||= storesClock.now();
            else expect(answer.code).toBe("temporarily_banned");
          }
          return !firstAdmitted.includes(0);
        };
        await waitFor(everyServerAdmitted, 10_000, {
          every: 50,
          what: () =>
            `all three to admit the key again; first admitted at ${firstAdmitted.join(", ")}, the ban ended at ${endsAt}`,
        });
        console.info(
          `skewed clocks, ${storage}, ${fleet.name}: the ban ended at ${endsAt}; first admitted by each server ${firstAdmitted.map((at) => at - endsAt).join(", ")} ms after`,
        );
        for (const at of firstAdmitted) {
          expect(at).toBeGreaterThanOrEqual(endsAt - 50);
          expect(at).toBeLessThanOrEqual(endsAt + 1_000);
        }
      }, 30_000);

      it("admits exactly the day limit of a key over the three, which all say the day resets at the store's next UTC midnight", async () => {
        const { key } = await createKey(db, ["--plan", "enterprise", "--per-minute", "1000", "--per-day", "20"]);
        // 45 requests: the 25 refusals stay under the ban's threshold of 30.
        const answers = await Promise.all(Array.from({ length: 45 }, (_, i) => call(i % 3, key, "/v1/store/orders")));
        const admitted = answers.filter((answer) => answer.status === 200).length;
        console.info(
          `skewed clocks, ${storage}, ${fleet.name}: 45 requests of a key limited to 20 a day -> ${admitted} admitted`,
        );
        expect(admitted).toBe(20);
        const nextMidnight = (Math.floor(storesClock.now() / DAY) + 1) * (DAY / 1000);
        const refused = await everyServer(key, "/v1/store/orders");
        expect(refused.map((answer) => answer.code)).toEqual(["rate_limited", "rate_limited", "rate_limited"]);
        expect(refused.map((answer) => seconds(answer, "x-ratelimit-reset"))).toEqual([
          nextMidnight,
          nextMidnight,
          nextMidnight,
        ]);
        const retries = refused.map((answer) => seconds(answer, "retry-after"));
        expect(Math.max(...retries) - Math.min(...retries)).toBeLessThanOrEqual(1);
        expect(Math.abs(retries[1]! - (nextMidnight - storesClock.now() / 1000))).toBeLessThanOrEqual(2);
      }, 30_000);

      it("keeps idempotency records, bans and day counts through the sweeps of the server whose clock is furthest ahead", async () => {
        const ahead = skews.indexOf(Math.max(...skews));
        const correct = skews.indexOf(0);
        const [records, banned, counted, busy] = await Promise.all([
          createKey(db),
          createKey(db, ["--plan", "free"]),
          createKey(db, ["--plan", "enterprise", "--per-minute", "100000", "--per-day", "1000"]),
          createKey(db),
        ]);
        // Through the correct server: 36 idempotency records, a banned key, a key with a day count of 50.
        const created = await Promise.all(
          Array.from({ length: 36 }, (_, i) =>
            call(correct, records.key, "/v1/pets", {
              method: "POST",
              headers: { "Idempotency-Key": `kept-${i}` },
              json: { name: `Kept ${i}`, categoryId: 3 },
            }),
          ),
        );
        expect(created.every((answer) => answer.status === 201)).toBe(true);
        await Promise.all(Array.from({ length: 100 }, () => call(correct, banned.key, "/v1/store/orders")));
        for (let i = 0; i < 50; i++) await call(correct, counted.key, "/v1/store/orders");
        // 1,005 creates, one at a time (one statement each), on the server furthest ahead: its
        // limiter and its idempotency store each sweep once, at their 1,000th statement.
        for (let i = 0; i < 1_005; i++) {
          const answer = await call(ahead, busy.key, "/v1/pets", {
            method: "POST",
            headers: { "Idempotency-Key": `busy-${i}` },
            json: { name: `Busy ${i}`, categoryId: 4 },
          });
          expect(answer.status).toBe(201);
        }
        const [row] = await sql`SELECT count(*)::int AS n FROM idempotency_keys WHERE key LIKE 'kept-%'`;
        console.info(
          `skewed clocks, ${storage}, ${fleet.name}: after 1,005 creates on the server ${skews[ahead]} s ahead: ${row!.n} of 36 idempotency records kept`,
        );
        expect(row!.n).toBe(36);
        // A retry of the first create, 1,000 creates later, on the correct server: the same pet.
        const retry = await call(correct, records.key, "/v1/pets", {
          method: "POST",
          headers: { "Idempotency-Key": "kept-0" },
          json: { name: "Kept 0", categoryId: 3 },
        });
        expect(retry).toMatchObject({ status: 201, id: created[0]!.id });
        expect(retry.headers.get("idempotent-replayed")).toBe("true");
        expect((await everyServer(banned.key, "/v1/store/orders")).map((answer) => answer.code)).toEqual([
          "temporarily_banned",
          "temporarily_banned",
          "temporarily_banned",
        ]);
        const next = await call(correct, counted.key, "/v1/store/orders");
        expect(next.headers.get("x-ratelimit-remaining")).toBe(String(1_000 - 51));
      }, 120_000);
    });
  }
}
