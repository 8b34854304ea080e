import type { BanPolicy, WindowSpec } from "@petstore/core";
import { describe, expect, it } from "vitest";
import { memoryLimiter } from "./limiter.js";

const MINUTE = 60_000;
const T0 = Date.UTC(2030, 0, 15, 12, 0, 0);
const NEXT_MIDNIGHT = Date.UTC(2030, 0, 16);
const BAN: BanPolicy = { threshold: 3, seconds: 600 };
const windows: WindowSpec[] = [
  { name: "minute", limit: 1, seconds: 60 },
  { name: "day", limit: 100, seconds: 86_400 },
];
/** Comfortably more hits than one sweep period, so at least one sweep runs. */
const SWEEP_PERIODS = 2 * 4096;

describe("memoryLimiter", () => {
  it("holds at most maxAnonymousBuckets anonymous buckets", async () => {
    const limiter = memoryLimiter({ maxAnonymousBuckets: 100 });
    for (let i = 0; i < 1_000; i++) await limiter.hit({ bucket: `ip:10.0.${i >> 8}.${i & 255}`, windows, ban: BAN, now: T0 });
    expect(limiter.size()).toBe(100);
  });

  it("evicts the least recently used anonymous bucket first", async () => {
    const limiter = memoryLimiter({ maxAnonymousBuckets: 2 });
    const hit = (bucket: string) => limiter.hit({ bucket, windows, ban: BAN, now: T0 });
    await hit("ip:a");
    await hit("ip:b");
    expect((await hit("ip:a")).allowed).toBe(false); // a is now the most recently used
    await hit("ip:c"); // over the cap: b, the least recently used, goes
    expect((await hit("ip:a")).allowed).toBe(false);
    expect((await hit("ip:b")).allowed).toBe(true);
  });

  it("never evicts keyed buckets, however many anonymous ones arrive", async () => {
    const limiter = memoryLimiter({ maxAnonymousBuckets: 2 });
    await limiter.hit({ bucket: "key:key_a", windows, ban: BAN, now: T0 });
    for (let i = 0; i < 50; i++) await limiter.hit({ bucket: `ip:192.0.2.${i}`, windows, ban: BAN, now: T0 });
    expect((await limiter.hit({ bucket: "key:key_a", windows, ban: BAN, now: T0 })).allowed).toBe(false);
    expect(limiter.size()).toBe(3);
  });

  it("sweeps buckets whose windows have all ended, keyed and anonymous alike", async () => {
    const limiter = memoryLimiter();
    for (let i = 0; i < 500; i++) {
      await limiter.hit({ bucket: `key:key_${i}`, windows, ban: BAN, now: T0 });
      await limiter.hit({ bucket: `ip:198.51.100.${i}`, windows, ban: BAN, now: T0 });
    }
    expect(limiter.size()).toBe(1_000);
    for (let i = 0; i < SWEEP_PERIODS; i++) await limiter.hit({ bucket: "key:busy", windows, ban: BAN, now: NEXT_MIDNIGHT + i });
    expect(limiter.size()).toBe(1);
  });

  it("keeps a bucket whose windows are live through a sweep", async () => {
    const limiter = memoryLimiter();
    await limiter.hit({ bucket: "key:key_a", windows, ban: BAN, now: T0 });
    for (let i = 0; i < SWEEP_PERIODS; i++) await limiter.hit({ bucket: "key:busy", windows, ban: BAN, now: T0 + MINUTE + i });
    expect(limiter.size()).toBe(2);
    // Its day count survived: one request earlier today, this one now.
    expect((await limiter.hit({ bucket: "key:key_a", windows, ban: BAN, now: T0 + 2 * MINUTE })).windows[1]!.remaining).toBe(98);
  });

  it("keeps a banned bucket through a sweep until its ban lifts, even after its windows end", async () => {
    const limiter = memoryLimiter();
    const longBan: BanPolicy = { threshold: 3, seconds: 2 * 86_400 };
    for (let i = 0; i <= 5; i++) await limiter.hit({ bucket: "ip:203.0.113.9", windows, ban: longBan, now: T0 + i });
    for (let i = 0; i < SWEEP_PERIODS; i++) await limiter.hit({ bucket: "key:busy", windows, ban: longBan, now: NEXT_MIDNIGHT + i });
    const decision = await limiter.hit({ bucket: "ip:203.0.113.9", windows, ban: longBan, now: NEXT_MIDNIGHT + MINUTE });
    expect(decision.bannedUntil).toBe(T0 + 4 + longBan.seconds * 1000);
    expect(limiter.size()).toBe(2);
  });
});
