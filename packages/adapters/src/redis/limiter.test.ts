import { StorageUnavailableError } from "@petstore/core";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { at, clock, MINUTE, NO_BAN, T0, windowsOf } from "../../../../test/_support/limiter-fixtures.js";
import { type RedisServer, startRedis } from "../../../../test/_support/redis-server.js";
import { type RedisSend, redisLimiter } from "./index.js";

let server: RedisServer;
let redis: Redis;
/** The README's ioredis one-liner; without the offline queue a hit fails at once while Redis is away. */
let send: RedisSend;
/** Every command name sent through `send`, in order. */
let sent: string[];
let prefixes = 0;
const freshPrefix = () => `test:${++prefixes}:`;

beforeAll(async () => {
  server = await startRedis();
  redis = new Redis(server.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => 50 });
  await new Promise((resolve) => redis.once("ready", resolve));
  sent = [];
  send = (args) => {
    sent.push(args[0]!);
    return redis.call(args[0]!, ...args.slice(1));
  };
}, 30_000);

afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

/** Resolves when ioredis has connected again (after a restart). */
const ready = () =>
  redis.status === "ready" ? Promise.resolve() : new Promise((resolve) => redis.once("ready", resolve));

describe("redisLimiter", () => {
  it("admits exactly the limit of hits fired at once over three connections, as three processes would", async () => {
    const others = [new Redis(server.url), new Redis(server.url)];
    try {
      const prefix = freshPrefix();
      const limiters = [
        send,
        ...others.map(
          (other): RedisSend =>
            (args) =>
              other.call(args[0]!, ...args.slice(1)),
        ),
      ].map((each) => redisLimiter({ send: each, prefix, clock }));
      const windows = windowsOf(25, 1_000);
      const ban = { threshold: 10, seconds: 600 };
      const decisions = await Promise.all(
        Array.from({ length: 90 }, (_, i) => at(T0 + i, limiters[i % 3]!).hit({ bucket: "key:shared", windows, ban })),
      );
      const admitted = decisions.filter((d) => d.allowed);
      expect(admitted).toHaveLength(25);
      expect(new Set(admitted.map((d) => d.windows[0]!.remaining)).size).toBe(25);
      // 65 refused: 10 refusals up to the threshold, the 11th bans, the rest are refused during the ban.
      expect(decisions.filter((d) => d.bannedUntil !== undefined)).toHaveLength(90 - 25 - 10);
    } finally {
      for (const other of others) other.disconnect();
    }
  });

  it("keeps a bucket in one hash under the prefix, its name a hash tag, expiring by Redis's clock when its last window or ban ends", async () => {
    const prefix = freshPrefix();
    // Redis's own clock (TIME), as a server runs it: the expiry and the windows agree.
    const limiter = redisLimiter({ send, prefix });
    const decision = await limiter.hit({ bucket: "ip:2001:db8::1", windows: windowsOf(5, 100), ban: NO_BAN });
    const banning = { threshold: 0, seconds: 3 * 86_400 };
    await limiter.hit({ bucket: "key:k1", windows: windowsOf(0, 100), ban: banning });
    expect((await redis.keys(`${prefix}*`)).sort()).toEqual([`${prefix}{ip:2001:db8::1}`, `${prefix}{key:k1}`]);
    // The day window ends at the next UTC midnight of Redis's clock; the ban in three days.
    const dayTtl = await redis.pttl(`${prefix}{ip:2001:db8::1}`);
    const untilMidnight = decision.windows[1]!.resetAt - decision.now;
    expect(dayTtl).toBeLessThanOrEqual(untilMidnight);
    expect(dayTtl).toBeGreaterThan(untilMidnight - 5_000);
    expect(await redis.pttl(`${prefix}{key:k1}`)).toBeGreaterThan(3 * 86_400_000 - 5_000);
  });

  it("loads the script once and runs every hit with EVALSHA", async () => {
    const limiter = redisLimiter({ send, prefix: freshPrefix(), clock });
    sent.length = 0;
    await Promise.all(
      Array.from({ length: 5 }, () =>
        at(T0, limiter).hit({ bucket: "key:a", windows: windowsOf(10, 100), ban: NO_BAN }),
      ),
    );
    expect(sent).toEqual(["SCRIPT", "EVALSHA", "EVALSHA", "EVALSHA", "EVALSHA", "EVALSHA"]);
  });

  it("runs the script with EVAL when the server forgot it (NOSCRIPT), then with EVALSHA again", async () => {
    const limiter = redisLimiter({ send, prefix: freshPrefix(), clock });
    const hit = () => at(T0, limiter).hit({ bucket: "key:a", windows: windowsOf(10, 100), ban: NO_BAN });
    await hit();
    await redis.script("FLUSH");
    sent.length = 0;
    expect((await hit()).windows[0]!.remaining).toBe(8);
    expect((await hit()).windows[0]!.remaining).toBe(7);
    expect(sent).toEqual(["EVALSHA", "EVAL", "EVALSHA"]);
  });

  it("fails hits with StorageUnavailableError while Redis is down, and decides again, through NOSCRIPT, once it is back", async () => {
    const limiter = redisLimiter({ send, prefix: freshPrefix(), timeoutMs: 500, clock });
    const hit = () => at(T0, limiter).hit({ bucket: "key:a", windows: windowsOf(10, 100), ban: NO_BAN });
    expect((await hit()).windows[0]!.remaining).toBe(9);
    await server.kill();
    try {
      for (let i = 0; i < 3; i++) await expect(hit()).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(limiter.check()).rejects.toThrow(/Redis failed a TIME/);
    } finally {
      await server.restart();
    }
    await ready();
    sent.length = 0;
    // The restarted server is empty: its data and its script cache are gone.
    expect((await hit()).windows[0]!.remaining).toBe(9);
    expect(sent).toEqual(["EVALSHA", "EVAL"]);
    expect(Math.abs((await limiter.check()) - Date.now())).toBeLessThan(5_000);
  }, 30_000);

  it("answers every hit within the timeout while Redis is stopped (SIGSTOP), and decides again after SIGCONT", async () => {
    const limiter = redisLimiter({ send, prefix: freshPrefix(), timeoutMs: 300, clock });
    const hit = () => at(T0, limiter).hit({ bucket: "key:a", windows: windowsOf(100, 1_000), ban: NO_BAN });
    await hit();
    server.signal("SIGSTOP");
    try {
      // Each one settles only through the timeout: a hung Redis never answers.
      const outcomes = await Promise.allSettled(Array.from({ length: 20 }, hit));
      for (const outcome of outcomes) {
        expect(outcome.status).toBe("rejected");
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(StorageUnavailableError);
        expect(String((outcome as PromiseRejectedResult).reason.message)).toMatch(
          /did not answer a rate-limit hit within 300 ms/,
        );
      }
      await expect(limiter.check()).rejects.toThrow(/did not answer a TIME/);
    } finally {
      server.signal("SIGCONT");
    }
    const after = await hit();
    expect(after.allowed).toBe(true);
    // The hits that timed out were on the wire: Redis ran them when it woke, so they counted
    // (a timeout errs toward limiting, never toward admitting more than the limit).
    expect(after.windows[0]!.remaining).toBe(100 - 1 - 20 - 1);
  }, 30_000);

  it("admits with failOpen while Redis does not answer, telling onOutcome each hit's error, or that Redis decided it", async () => {
    const errors: (StorageUnavailableError | undefined)[] = [];
    const limiter = redisLimiter({
      send,
      prefix: freshPrefix(),
      timeoutMs: 300,
      failOpen: true,
      onOutcome: (error) => errors.push(error),
      clock,
    });
    const hit = () => at(T0 + 5_000, limiter).hit({ bucket: "key:a", windows: windowsOf(1, 100), ban: NO_BAN });
    expect((await hit()).allowed).toBe(true);
    expect((await hit()).allowed).toBe(false);
    server.signal("SIGSTOP");
    try {
      const open = await hit();
      expect(open).toEqual({
        now: T0 + 5_000,
        allowed: true,
        windows: [
          { name: "minute", limit: 1, remaining: 1, resetAt: T0 + MINUTE, exceeded: false },
          { name: "day", limit: 100, remaining: 100, resetAt: Date.UTC(2030, 0, 16), exceeded: false },
        ],
      });
      expect(errors).toHaveLength(3);
      expect(errors[2]).toBeInstanceOf(StorageUnavailableError);
    } finally {
      server.signal("SIGCONT");
    }
    // Back to the counters Redis kept.
    expect((await hit()).allowed).toBe(false);
    expect(errors.map((error) => error === undefined)).toEqual([true, true, false, true]);
  }, 30_000);

  it("refuses a timeout that is not a positive number", () => {
    expect(() => redisLimiter({ send, timeoutMs: 0 })).toThrow(/timeoutMs must be a positive number/);
  });
});
