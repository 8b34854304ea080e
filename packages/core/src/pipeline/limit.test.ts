import { memoryAdapters, memoryLimiter } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import { resolveOptions } from "../options.js";
import type { HitInput, RateLimiter } from "../ports.js";
import { limitStage } from "./limit.js";

const T0 = Date.UTC(2030, 0, 15, 12);

describe("limitStage", () => {
  it("hits the limiter once with the bucket, its windows and the ban policy, and hands on the limiter's decision and instant", async () => {
    const inner = memoryLimiter({ clock: () => T0 });
    const hits: HitInput[] = [];
    const limiter: RateLimiter = {
      hit: (input) => {
        hits.push(input);
        return inner.hit(input);
      },
    };
    const settings = resolveOptions({ ...memoryAdapters(), limiter });
    const limits = settings.limitsOf(undefined);
    const { decision } = await limitStage(settings)({ name: "ip:192.0.2.1", client: "192.0.2.1", limits });
    expect(decision).toMatchObject({
      allowed: true,
      now: T0,
      windows: [
        { name: "minute", remaining: 59 },
        { name: "day", remaining: 999 },
      ],
    });
    expect(hits).toEqual([{ bucket: "ip:192.0.2.1", windows: limits.windows, ban: { threshold: 30, seconds: 600 } }]);
  });

  describe("with an account's bucket shared by its keys", () => {
    const limitsOf = (perMinute: number, perDay: number) =>
      resolveOptions({ ...memoryAdapters(), plans: { free: { perMinute, perDay } } }).limitsOf(undefined);
    let now = T0;
    const settings = resolveOptions({ ...memoryAdapters(), limiter: memoryLimiter({ clock: () => now }) });
    const limit = limitStage(settings);
    const keyOwn = limitsOf(10, 50);
    const account = limitsOf(60, 1_000);
    const bucket = (name: string, own = keyOwn) => ({
      name: `{acct_t}${name}`,
      client: undefined,
      limits: own,
      shared: [{ name: "{acct_t}", limits: account }],
    });
    /** In a fresh `minute`, `requests` of the account's other keys, then one of `key`. */
    const afterOtherKeys = async ({ minute, requests }: { minute: number; requests: number }, key: string) => {
      now = T0 + minute * 60_000;
      for (let i = 0; i < requests; i++) await limit(bucket(`key:other${i % 9}`, limitsOf(100, 1_000)));
      return limit(bucket(key));
    };

    it("reports the key's own bucket while it has fewer requests left", async () => {
      now = T0;
      const { decision, limits } = await limit(bucket("key:a"));
      expect(limits).toBe(keyOwn);
      expect(decision.windows[0]).toMatchObject({ limit: 10, remaining: 9 });
    });

    it("reports the account's bucket once it has fewer requests left than the key's, with its limits", async () => {
      const { decision, limits } = await afterOtherKeys({ minute: 2, requests: 55 }, "key:b");
      expect(limits).toBe(account);
      expect(decision.windows[0]).toMatchObject({ limit: 60, remaining: 4 });
    });

    it("reports the account's bucket when it refused, though the key's has room", async () => {
      const { decision, limits } = await afterOtherKeys({ minute: 4, requests: 60 }, "key:c");
      expect(decision.allowed).toBe(false);
      expect(limits).toBe(account);
      expect(decision.windows[0]).toMatchObject({ limit: 60, remaining: 0, exceeded: true });
    });

    it("reports on a tie the bucket that resets later", async () => {
      now = T0 + 6 * 60_000;
      const tied = limitsOf(10, 9);
      const { decision, limits } = await limit({
        name: "{acct_u}key:d",
        client: undefined,
        limits: limitsOf(9, 1_000),
        shared: [{ name: "{acct_u}", limits: tied }],
      });
      // The key's minute and the account's day both have 8 left: the day resets later.
      expect(limits).toBe(tied);
      expect(decision.windows[1]).toMatchObject({ name: "day", remaining: 8 });
    });
  });

  describe("the limiter's instant as this server estimates it", () => {
    // The store's clock 65 s ahead of this server's; each hit takes 40 ms on the monotonic clock, decided 10 ms in.
    const clock = { store: T0 + 65_000, server: T0, monotonic: 1_000 };
    const limiter: RateLimiter = {
      hit: async (input) => {
        clock.monotonic += 10;
        const decision = await memoryLimiter({ clock: () => clock.store + 10 }).hit(input);
        clock.monotonic += 30;
        return decision;
      },
    };
    const settings = resolveOptions({
      ...memoryAdapters(),
      limiter,
      clock: () => clock.server,
      monotonicClock: () => clock.monotonic,
    });
    const limit = limitStage(settings);
    const bucket = { name: "ip:192.0.2.1", client: "192.0.2.1", limits: settings.limitsOf(undefined) };

    it("is this server's clock before any decision", () => {
      expect(limit.instant()).toBe(T0);
    });

    it("is then the last decision's instant and the monotonic time since its hit was sent: ahead by the time before the store decided", async () => {
      await limit(bucket);
      expect(limit.instant()).toBe(T0 + 65_000 + 10 + 40);
      clock.monotonic += 5_000;
      expect(limit.instant()).toBe(T0 + 65_000 + 10 + 40 + 5_000);
    });
  });
});
