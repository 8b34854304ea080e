import type { BanPolicy, WindowPair } from "@petstore/core";
import { describe, expect, it } from "vitest";
import { memoryLimiter } from "./limiter.js";

const MINUTE = 60_000;
const T0 = Date.UTC(2030, 0, 15, 12, 0, 0);
const NEXT_MIDNIGHT = Date.UTC(2030, 0, 16);
const BAN: BanPolicy = { threshold: 3, seconds: 600 };
const windows: WindowPair = [
  { name: "minute", limit: 1, seconds: 60 },
  { name: "day", limit: 100, seconds: 86_400 },
];
/** The limiters' clock, which `at` sets before a hit. */
let now = T0;
const clock = () => now;
const at = <L>(time: number, limiter: L): L => {
  now = time;
  return limiter;
};
/** Comfortably more hits than one sweep period, so at least one sweep runs. */
const SWEEP_PERIODS = 2 * 4096;

describe("memoryLimiter", () => {
  it("holds at most maxAnonymousBuckets anonymous buckets", async () => {
    const limiter = memoryLimiter({ maxAnonymousBuckets: 100, clock });
    for (let i = 0; i < 1_000; i++)
      await at(T0, limiter).hit({ bucket: `ip:10.0.${i >> 8}.${i & 255}`, windows, ban: BAN });
    expect(limiter.size()).toBe(100);
  });

  it("counts every bucket that is not a key's or an account's as anonymous: the admin listener's failures too", async () => {
    const limiter = memoryLimiter({ maxAnonymousBuckets: 100, clock });
    for (let i = 0; i < 1_000; i++)
      await at(T0, limiter).hit({ bucket: `admin-failures:10.0.${i >> 8}.${i & 255}:-`, windows, ban: BAN });
    await at(T0, limiter).hit({
      bucket: "{acct_a}key:key_a",
      windows,
      ban: BAN,
      shared: [{ bucket: "{acct_a}", windows }],
    });
    expect(limiter.size()).toBe(102);
  });

  it("evicts the least recently used anonymous bucket first", async () => {
    const limiter = memoryLimiter({ maxAnonymousBuckets: 2, clock });
    const hit = (bucket: string) => at(T0, limiter).hit({ bucket, windows, ban: BAN });
    await hit("ip:a");
    await hit("ip:b");
    expect((await hit("ip:a")).allowed).toBe(false); // a is now the most recently used
    await hit("ip:c"); // over the cap: b, the least recently used, goes
    expect((await hit("ip:a")).allowed).toBe(false);
    expect((await hit("ip:b")).allowed).toBe(true);
  });

  it("never evicts keyed buckets, however many anonymous ones arrive", async () => {
    const limiter = memoryLimiter({ maxAnonymousBuckets: 2, clock });
    await at(T0, limiter).hit({ bucket: "key:key_a", windows, ban: BAN });
    for (let i = 0; i < 50; i++) await at(T0, limiter).hit({ bucket: `ip:192.0.2.${i}`, windows, ban: BAN });
    expect((await at(T0, limiter).hit({ bucket: "key:key_a", windows, ban: BAN })).allowed).toBe(false);
    expect(limiter.size()).toBe(3);
  });

  it("sweeps buckets whose windows have all ended, keyed and anonymous alike", async () => {
    const limiter = memoryLimiter({ clock });
    for (let i = 0; i < 500; i++) {
      await at(T0, limiter).hit({ bucket: `key:key_${i}`, windows, ban: BAN });
      await at(T0, limiter).hit({ bucket: `ip:198.51.100.${i}`, windows, ban: BAN });
    }
    expect(limiter.size()).toBe(1_000);
    for (let i = 0; i < SWEEP_PERIODS; i++)
      await at(NEXT_MIDNIGHT + i, limiter).hit({ bucket: "key:busy", windows, ban: BAN });
    expect(limiter.size()).toBe(1);
  });

  it("keeps a bucket whose windows are live through a sweep", async () => {
    const limiter = memoryLimiter({ clock });
    await at(T0, limiter).hit({ bucket: "key:key_a", windows, ban: BAN });
    for (let i = 0; i < SWEEP_PERIODS; i++)
      await at(T0 + MINUTE + i, limiter).hit({ bucket: "key:busy", windows, ban: BAN });
    expect(limiter.size()).toBe(2);
    // Its day count survived: one request earlier today, this one now.
    expect(
      (await at(T0 + 2 * MINUTE, limiter).hit({ bucket: "key:key_a", windows, ban: BAN })).windows[1]!.remaining,
    ).toBe(98);
  });

  it("keeps a banned bucket through a sweep until its ban lifts, even after its windows end", async () => {
    const limiter = memoryLimiter({ clock });
    const longBan: BanPolicy = { threshold: 3, seconds: 2 * 86_400 };
    for (let i = 0; i <= 5; i++) await at(T0 + i, limiter).hit({ bucket: "ip:203.0.113.9", windows, ban: longBan });
    for (let i = 0; i < SWEEP_PERIODS; i++)
      await at(NEXT_MIDNIGHT + i, limiter).hit({ bucket: "key:busy", windows, ban: longBan });
    const decision = await at(NEXT_MIDNIGHT + MINUTE, limiter).hit({ bucket: "ip:203.0.113.9", windows, ban: longBan });
    expect(decision.bannedUntil).toBe(T0 + 4 + longBan.seconds * 1000);
    expect(limiter.size()).toBe(2);
  });
});
