import fc from "fast-check";
import { expect, it } from "vitest";
import { type Closable, describeWithFixture } from "./_fixture.js";
import { limiterRules } from "./_limiter-rules.js";
import {
  type BanPolicy,
  CLOCK_STEP_MS,
  type Decision,
  type HitInput,
  type RateLimiter,
  type WindowPair,
} from "../ports.js";

/** A fresh limiter with no buckets. */
export interface LimiterFixture extends Closable {
  limiter: RateLimiter;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** A whole UTC minute, mid-day: the minute window starts here, the day window at midnight. */
const T0 = Date.UTC(2030, 0, 15, 12, 0, 0);
const NEXT_MIDNIGHT = Date.UTC(2030, 0, 16);
const BAN: BanPolicy = { threshold: 3, seconds: 600 };
/** For tests of counting alone: refusals never add up to a ban. */
const NO_BAN: BanPolicy = { threshold: 1_000_000, seconds: 600 };

const windowsOf = (perMinute: number, perDay: number): WindowPair => [
  { name: "minute", limit: perMinute, seconds: 60 },
  { name: "day", limit: perDay, seconds: 86_400 },
];

const minute = (d: Decision) => d.windows[0]!;
const day = (d: Decision) => d.windows[1]!;

const BUCKET = fc.constantFrom("key:a", "key:b", "ip:203.0.113.7");
/** Mostly hits within one window, sometimes a jump over a window or a ban. */
const ADVANCE = fc.oneof(fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 0, max: 400_000 }));
/**
 * Now and then the store's clock stepped back, by over a day: before every instant of the run
 * so far (a run moves forward by less than a day), so that no bucket a store swept meanwhile
 * would have been found by a late read of the rules (which keep every bucket).
 */
const ADVANCE_OR_STEP_BACK = fc.oneof(
  { arbitrary: ADVANCE, weight: 6 },
  { arbitrary: fc.integer({ min: DAY, max: DAY + 400_000 }).map((ms) => -ms), weight: 1 },
);

interface Limits {
  perMinute: number;
  perFiveMinutes: number;
  threshold: number;
  banSeconds: number;
}

function limitsUpTo(
  perMinute: number,
  perFiveMinutes: number,
  threshold: number,
  minBanSeconds: number,
): fc.Arbitrary<Limits> {
  return fc.record({
    perMinute: fc.integer({ min: 0, max: perMinute }),
    perFiveMinutes: fc.integer({ min: 0, max: perFiveMinutes }),
    threshold: fc.integer({ min: 0, max: threshold }),
    banSeconds: fc.integer({ min: minBanSeconds, max: 200 }),
  });
}

/** Hits fired at once (`buckets`, in the order sent), `advanceMs` after the previous ones. */
interface Burst {
  buckets: string[];
  advanceMs: number;
}

/** Each decision beside its hit's bucket, sorted by bucket and then by what was decided. */
function byBucket(inputs: readonly HitInput[], decisions: readonly Decision[]): [string, Decision][] {
  const key = ([bucket, d]: [string, Decision]) =>
    [
      bucket,
      d.allowed,
      d.bannedUntil ?? 0,
      d.banStarted ?? false,
      ...d.windows.flatMap((w) => [w.remaining, w.resetAt, w.exceeded]),
    ].join("|");
  return decisions
    .map((decision, i): [string, Decision] => [inputs[i]!.bucket, decision])
    .sort((a, b) => key(a).localeCompare(key(b)));
}

/** How `rateLimiterContract` runs its property tests. */
export interface RateLimiterContractOptions {
  /**
   * How many random sequences of hits each property test tries (fast-check's `numRuns`).
   * Default 100; fewer where every hit is a round trip to another process.
   */
  runs?: number;
}

/**
 * Makes a fresh limiter deciding by `clock` (Unix ms), or by its store's own clock when
 * `clock` is undefined: pass it to the adapter's `clock` option.
 */
export type MakeLimiter = (clock: (() => number) | undefined) => Promise<LimiterFixture>;

/**
 * The `RateLimiter` contract: epoch-aligned fixed windows, admitted requests counted in every
 * window, refusals consuming nothing, the ban (begun once), independent buckets, no
 * over-admission under concurrency, and decisions at the store's own clock when none is given;
 * then random sequences of hits (fast-check), one by one and fired at once, each decision
 * exactly the one the rate limit's rules make (a plain model of them, in this package).
 * @example rateLimiterContract("memory", async (clock) => ({ limiter: memoryLimiter({ clock }) }));
 */
export function rateLimiterContract(name: string, make: MakeLimiter, options: RateLimiterContractOptions = {}): void {
  /** The test's clock, which each hit sets to its instant. */
  let testNow = T0;
  describeWithFixture(
    `RateLimiter contract: ${name}`,
    () => make(() => testNow),
    (fixture) => {
      const hit = (now: number, windows = windowsOf(3, 10), bucket = "key:key_a", ban = BAN) => {
        testNow = now;
        return fixture.limiter.hit({ bucket, windows, ban });
      };

      it("reports the instant it decided at: the clock's", async () => {
        expect((await hit(T0 + 5_123)).now).toBe(T0 + 5_123);
        expect((await hit(T0 + 6_000)).now).toBe(T0 + 6_000);
      });

      it("reports every window in the order given, with its name and limit", async () => {
        const decision = await hit(T0 + 5_000);
        expect(decision.allowed).toBe(true);
        expect(decision.bannedUntil).toBeUndefined();
        expect(decision.windows.map((w) => [w.name, w.limit])).toEqual([
          ["minute", 3],
          ["day", 10],
        ]);
      });

      it("resets the minute window at the next whole minute and the day window at the next UTC midnight", async () => {
        const decision = await hit(T0 + 12_345);
        expect(minute(decision).resetAt).toBe(T0 + MINUTE);
        expect(day(decision).resetAt).toBe(NEXT_MIDNIGHT);
      });

      it("starts a window exactly on the boundary: the last millisecond belongs to the old one", async () => {
        expect(minute(await hit(T0 - 1)).resetAt).toBe(T0);
        const first = await hit(T0);
        expect(minute(first)).toMatchObject({ remaining: 2, resetAt: T0 + MINUTE });
        expect(day(first).remaining).toBe(8);
        expect(minute(await hit(T0 + MINUTE - 1))).toMatchObject({ remaining: 1, resetAt: T0 + MINUTE });
        expect(minute(await hit(T0 + MINUTE))).toMatchObject({ remaining: 2, resetAt: T0 + 2 * MINUTE });
      });

      it("counts an admitted request against both windows", async () => {
        const decision = await hit(T0);
        expect(minute(decision)).toMatchObject({ remaining: 2, exceeded: false });
        expect(day(decision)).toMatchObject({ remaining: 9, exceeded: false });
      });

      it("reports what remains after this request, down to 0 and never negative", async () => {
        const decisions: Decision[] = [];
        for (let i = 0; i < 6; i++) decisions.push(await hit(T0 + i));
        expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false, false]);
        expect(decisions.map((d) => minute(d).remaining)).toEqual([2, 1, 0, 0, 0, 0]);
      });

      it("flags only the window that refused as exceeded", async () => {
        for (let i = 0; i < 3; i++) await hit(T0);
        const refused = await hit(T0 + 1);
        expect(refused.allowed).toBe(false);
        expect(refused.bannedUntil).toBeUndefined();
        expect(minute(refused)).toMatchObject({ exceeded: true, remaining: 0, resetAt: T0 + MINUTE });
        expect(day(refused)).toMatchObject({ exceeded: false, remaining: 7 });
      });

      it("consumes nothing on a refusal", async () => {
        const windows = windowsOf(2, 5);
        await hit(T0, windows);
        await hit(T0, windows);
        for (let i = 0; i < 3; i++) expect(day(await hit(T0 + 1, windows))).toMatchObject({ remaining: 3 });
        const next = await hit(T0 + MINUTE, windows);
        expect(next.allowed).toBe(true);
        expect(day(next).remaining).toBe(2);
        expect(minute(next).remaining).toBe(1);
      });

      it("never moves a window back: a late request stamped in an older window counts in the current one", async () => {
        for (let i = 0; i < 3; i++) await hit(T0 + MINUTE + i, windowsOf(3, 100), "key:key_a", NO_BAN);
        // A statement stamped before the one that took the bucket first committed.
        const late = await hit(T0 + MINUTE - 1, windowsOf(3, 100), "key:key_a", NO_BAN);
        expect(late).toMatchObject({ allowed: false, now: T0 + MINUTE + 2 });
        expect(minute(late)).toMatchObject({ remaining: 0, resetAt: T0 + 2 * MINUTE });
        expect((await hit(T0 + MINUTE + 10, windowsOf(3, 100), "key:key_a", NO_BAN)).allowed).toBe(false);
      });

      it("admits again in the next minute window", async () => {
        for (let i = 0; i < 4; i++) await hit(T0);
        const next = await hit(T0 + MINUTE);
        expect(next.allowed).toBe(true);
        expect(minute(next).remaining).toBe(2);
      });

      it("refuses on the day limit across minutes until the next UTC midnight", async () => {
        const windows = windowsOf(10, 3);
        for (let i = 0; i < 3; i++) expect((await hit(T0 + i * MINUTE, windows)).allowed).toBe(true);
        const refused = await hit(T0 + 3 * MINUTE, windows);
        expect(refused.allowed).toBe(false);
        expect(minute(refused)).toMatchObject({ exceeded: false, remaining: 10 });
        expect(day(refused)).toMatchObject({ exceeded: true, remaining: 0, resetAt: NEXT_MIDNIGHT });
        expect((await hit(NEXT_MIDNIGHT - 1, windows)).allowed).toBe(false);
        const nextDay = await hit(NEXT_MIDNIGHT, windows);
        expect(nextDay.allowed).toBe(true);
        expect(day(nextDay)).toMatchObject({ remaining: 2, resetAt: NEXT_MIDNIGHT + 86_400_000 });
      });

      it("flags both windows when both refuse", async () => {
        const windows = windowsOf(2, 2);
        await hit(T0, windows);
        await hit(T0, windows);
        const refused = await hit(T0, windows);
        expect(refused.windows.map((w) => w.exceeded)).toEqual([true, true]);
      });

      it("does not ban a bucket refused threshold times within one minute window", async () => {
        const windows = windowsOf(1, 100);
        await hit(T0, windows);
        for (let i = 1; i <= BAN.threshold; i++) {
          const refused = await hit(T0 + i, windows);
          expect(refused.allowed).toBe(false);
          expect(refused.bannedUntil).toBeUndefined();
        }
        expect((await hit(T0 + MINUTE, windows)).allowed).toBe(true);
      });

      it("bans on the refusal after threshold, reporting bannedUntil from that refusal", async () => {
        const windows = windowsOf(1, 100);
        await hit(T0, windows);
        for (let i = 1; i <= BAN.threshold; i++) await hit(T0 + i, windows);
        const banning = await hit(T0 + 4_000, windows);
        expect(banning.allowed).toBe(false);
        expect(banning.bannedUntil).toBe(T0 + 4_000 + BAN.seconds * 1000);
      });

      it("says which refusal began the ban: that one only, not those during it", async () => {
        const windows = windowsOf(1, 100);
        const decisions = [await hit(T0, windows)];
        for (let i = 1; i <= BAN.threshold + 3; i++) decisions.push(await hit(T0 + i, windows));
        decisions.push(await hit(T0 + 2 * MINUTE, windows));
        expect(decisions.map((d) => d.banStarted === true)).toEqual(decisions.map((_, i) => i === BAN.threshold + 1));
      });

      it("says once that a ban began when the refusals arrive concurrently", async () => {
        const windows = windowsOf(2, 100);
        const decisions = await Promise.all(Array.from({ length: 2 + BAN.threshold + 5 }, () => hit(T0, windows)));
        expect(decisions.filter((d) => d.banStarted)).toHaveLength(1);
        expect(decisions.filter((d) => d.bannedUntil !== undefined)).toHaveLength(5);
      });

      it("does not ban for refusals spread over different minute windows", async () => {
        const windows = windowsOf(1, 100);
        for (const start of [T0, T0 + MINUTE]) {
          await hit(start, windows);
          for (let i = 1; i <= BAN.threshold; i++) expect((await hit(start + i, windows)).bannedUntil).toBeUndefined();
        }
        expect((await hit(T0 + 2 * MINUTE, windows)).allowed).toBe(true);
      });

      it("refuses during a ban without extending it, counting nothing, and admits when it lifts", async () => {
        const windows = windowsOf(1, 100);
        await hit(T0, windows);
        for (let i = 1; i <= BAN.threshold + 1; i++) await hit(T0 + i, windows);
        const bannedUntil = T0 + BAN.threshold + 1 + BAN.seconds * 1000;
        for (const now of [T0 + 10_000, T0 + 2 * MINUTE, T0 + 5 * MINUTE, bannedUntil - 1]) {
          const during = await hit(now, windows);
          expect(during.allowed).toBe(false);
          expect(during.bannedUntil).toBe(bannedUntil);
        }
        const after = await hit(bannedUntil, windows);
        expect(after.allowed).toBe(true);
        expect(after.bannedUntil).toBeUndefined();
        // Only the first request and this one were ever admitted.
        expect(day(after).remaining).toBe(98);
      });

      it("does not count requests made during a ban toward the next ban", async () => {
        const windows = windowsOf(1, 100);
        await hit(T0, windows);
        for (let i = 1; i <= BAN.threshold; i++) await hit(T0 + i, windows);
        await hit(T0 + 30_000, windows);
        // The ban lifts mid-minute; these refusals fall in that same minute window, before it lifts.
        const bannedUntil = T0 + 30_000 + BAN.seconds * 1000;
        const liftMinute = bannedUntil - (bannedUntil % MINUTE);
        for (let i = 0; i < 20; i++) expect((await hit(liftMinute + i, windows)).bannedUntil).toBe(bannedUntil);
        expect((await hit(bannedUntil, windows)).allowed).toBe(true);
        for (let i = 1; i <= BAN.threshold; i++)
          expect((await hit(bannedUntil + i, windows)).bannedUntil).toBeUndefined();
        expect((await hit(bannedUntil + 100, windows)).bannedUntil).toBe(bannedUntil + 100 + BAN.seconds * 1000);
      });

      it("keeps buckets independent: exhausting or banning one leaves another untouched", async () => {
        const windows = windowsOf(1, 100);
        const banned = "ip:2001:db8::1";
        await hit(T0, windows, banned);
        for (let i = 1; i <= BAN.threshold + 1; i++) await hit(T0 + i, windows, banned);
        for (const other of ["ip:2001:db8::2", "key:key_a", "ip:198.51.100.7"]) {
          const decision = await hit(T0 + 10, windows, other);
          expect(decision.allowed).toBe(true);
          expect(decision.bannedUntil).toBeUndefined();
          expect(minute(decision).remaining).toBe(0);
          expect(day(decision).remaining).toBe(99);
        }
        expect((await hit(T0 + 20, windows, banned)).bannedUntil).toBeDefined();
      });

      it("admits exactly the limit of many concurrent hits on one bucket", async () => {
        const windows = windowsOf(10, 1_000);
        const decisions = await Promise.all(
          Array.from({ length: 30 }, () => hit(T0 + 7, windows, "key:key_a", NO_BAN)),
        );
        const admitted = decisions.filter((d) => d.allowed);
        expect(admitted).toHaveLength(10);
        // Each admitted request saw its own count: the remainders are 9..0, once each.
        expect(admitted.map((d) => minute(d).remaining).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        expect(decisions.filter((d) => !d.allowed).every((d) => minute(d).exceeded)).toBe(true);
        expect(day(await hit(T0 + MINUTE, windows)).remaining).toBe(1_000 - 11);
      });

      it("admits exactly the day limit of many concurrent hits when the day window binds", async () => {
        const windows = windowsOf(100, 12);
        const decisions = await Promise.all(
          Array.from({ length: 36 }, () => hit(T0 + 7, windows, "key:key_a", NO_BAN)),
        );
        expect(decisions.filter((d) => d.allowed)).toHaveLength(12);
        expect(decisions.filter((d) => !d.allowed).every((d) => day(d).exceeded && !minute(d).exceeded)).toBe(true);
      });

      // An account's keys: each hit counts in its key's bucket and in the account's, shared.
      const ACCOUNT = "{acct_a}";
      const KEY_A = "{acct_a}key:key_a";
      const KEY_B = "{acct_a}key:key_b";
      const hitShared = (now: number, bucket: string, own: WindowPair, shared: WindowPair, ban = BAN) => {
        testNow = now;
        return fixture.limiter.hit({ bucket, windows: own, ban, shared: [{ bucket: ACCOUNT, windows: shared }] });
      };
      const account = (d: Decision) => d.shared![0]!;

      it("reports each shared bucket's windows beside the bucket's own", async () => {
        const decision = await hitShared(T0 + 5, KEY_A, windowsOf(2, 50), windowsOf(3, 100));
        expect(decision.allowed).toBe(true);
        expect(decision.windows.map((w) => [w.limit, w.remaining])).toEqual([
          [2, 1],
          [50, 49],
        ]);
        expect(account(decision).map((w) => [w.name, w.limit, w.remaining, w.resetAt])).toEqual([
          ["minute", 3, 2, T0 + MINUTE],
          ["day", 100, 99, NEXT_MIDNIGHT],
        ]);
      });

      it("refuses a request when its own bucket refuses, though the shared one has room", async () => {
        for (let i = 0; i < 2; i++) await hitShared(T0, KEY_A, windowsOf(2, 50), windowsOf(3, 100));
        const refused = await hitShared(T0 + 1, KEY_A, windowsOf(2, 50), windowsOf(3, 100));
        expect(refused.allowed).toBe(false);
        expect(minute(refused)).toMatchObject({ remaining: 0, exceeded: true });
        expect(account(refused)[0]).toMatchObject({ remaining: 1, exceeded: false });
      });

      it("refuses a request when a shared bucket refuses, though its own has room: the account's limit counts across its keys", async () => {
        for (let i = 0; i < 2; i++) await hitShared(T0, KEY_A, windowsOf(5, 50), windowsOf(3, 100));
        expect((await hitShared(T0 + 1, KEY_B, windowsOf(5, 50), windowsOf(3, 100))).allowed).toBe(true);
        const refused = await hitShared(T0 + 2, KEY_B, windowsOf(5, 50), windowsOf(3, 100));
        expect(refused.allowed).toBe(false);
        expect(minute(refused)).toMatchObject({ remaining: 4, exceeded: false });
        expect(account(refused)[0]).toMatchObject({ remaining: 0, exceeded: true });
      });

      it("counts a refused request in no bucket, its own or a shared one", async () => {
        await hitShared(T0, KEY_A, windowsOf(1, 50), windowsOf(3, 100));
        for (let i = 1; i <= BAN.threshold; i++) await hitShared(T0 + i, KEY_A, windowsOf(1, 50), windowsOf(3, 100));
        const other = await hitShared(T0 + 10, KEY_B, windowsOf(5, 50), windowsOf(3, 100));
        expect(minute(other).remaining).toBe(4);
        expect(account(other).map((w) => w.remaining)).toEqual([1, 98]);
        const next = await hitShared(T0 + MINUTE, KEY_A, windowsOf(1, 50), windowsOf(3, 100));
        expect(day(next).remaining).toBe(48);
      });

      it("bans the bucket whose refusals crossed the threshold, never the shared one: the account's other keys are still admitted", async () => {
        await hitShared(T0, KEY_A, windowsOf(1, 50), windowsOf(10, 100));
        for (let i = 1; i <= BAN.threshold + 1; i++)
          await hitShared(T0 + i, KEY_A, windowsOf(1, 50), windowsOf(10, 100));
        expect((await hitShared(T0 + 10, KEY_A, windowsOf(1, 50), windowsOf(10, 100))).bannedUntil).toBe(
          T0 + BAN.threshold + 1 + BAN.seconds * 1000,
        );
        const other = await hitShared(T0 + 11, KEY_B, windowsOf(5, 50), windowsOf(10, 100));
        expect(other.allowed).toBe(true);
        expect(other.bannedUntil).toBeUndefined();
        expect(account(other)[0]!.remaining).toBe(8);
      });

      it("refuses a banned bucket's request without counting it in the shared bucket", async () => {
        await hitShared(T0, KEY_A, windowsOf(1, 50), windowsOf(10, 100));
        for (let i = 1; i <= BAN.threshold + 1; i++)
          await hitShared(T0 + i, KEY_A, windowsOf(1, 50), windowsOf(10, 100));
        const during = await hitShared(T0 + MINUTE, KEY_A, windowsOf(1, 50), windowsOf(10, 100));
        expect(during).toMatchObject({ allowed: false });
        expect(during.bannedUntil).toBeDefined();
        expect(
          account(await hitShared(T0 + MINUTE + 1, KEY_B, windowsOf(5, 50), windowsOf(10, 100)))[1]!.remaining,
        ).toBe(98);
      });

      it("admits exactly the shared limit of many concurrent hits spread over the account's keys", async () => {
        const keys = [KEY_A, KEY_B, "{acct_a}key:key_c"];
        const decisions = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            hitShared(T0 + 7, keys[i % 3]!, windowsOf(100, 1_000), windowsOf(10, 1_000), NO_BAN),
          ),
        );
        expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
        expect(decisions.filter((d) => !d.allowed).every((d) => account(d)[0]!.exceeded)).toBe(true);
        const after = await hitShared(T0 + MINUTE, KEY_A, windowsOf(100, 1_000), windowsOf(10, 1_000), NO_BAN);
        expect(account(after)[1]!.remaining).toBe(1_000 - 11);
      });

      it("admits exactly a bucket's own smaller limit of many concurrent hits inside a shared one", async () => {
        const decisions = await Promise.all([
          ...Array.from({ length: 20 }, () =>
            hitShared(T0 + 7, KEY_A, windowsOf(4, 1_000), windowsOf(10, 1_000), NO_BAN),
          ),
          ...Array.from({ length: 20 }, () =>
            hitShared(T0 + 7, KEY_B, windowsOf(100, 1_000), windowsOf(10, 1_000), NO_BAN),
          ),
        ]);
        expect(decisions.slice(0, 20).filter((d) => d.allowed).length).toBeLessThanOrEqual(4);
        expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
        const a = await hitShared(T0 + MINUTE, KEY_A, windowsOf(4, 1_000), windowsOf(10, 1_000), NO_BAN);
        const admittedA = decisions.slice(0, 20).filter((d) => d.allowed).length;
        expect(day(a).remaining).toBe(1_000 - admittedA - 1);
      });

      // An operator's views, where the limiter offers them (peek, unban).
      const peek = (now: number, windows = windowsOf(3, 10), bucket = "key:key_a") => {
        testNow = now;
        return fixture.limiter.peek!({ bucket, windows, ban: BAN });
      };
      const unban = (now: number, bucket = "key:key_a") => {
        testNow = now;
        return fixture.limiter.unban!(bucket);
      };

      it("peeks at a bucket counting nothing: what is left in each window, and when each resets", async () => {
        if (!fixture.limiter.peek) return;
        expect(await peek(T0 + 5)).toEqual({
          now: T0 + 5,
          windows: [
            { name: "minute", limit: 3, remaining: 3, resetAt: T0 + MINUTE, exceeded: false },
            { name: "day", limit: 10, remaining: 10, resetAt: NEXT_MIDNIGHT, exceeded: false },
          ],
        });
        await hit(T0);
        await hit(T0 + 1);
        for (let i = 0; i < 3; i++) expect((await peek(T0 + 2)).windows.map((w) => w.remaining)).toEqual([1, 8]);
        expect((await hit(T0 + 3)).allowed).toBe(true);
        // A minute later the minute window is a new one; the day's count stays.
        expect((await peek(T0 + MINUTE + 1)).windows.map((w) => [w.remaining, w.resetAt])).toEqual([
          [3, T0 + 2 * MINUTE],
          [7, NEXT_MIDNIGHT],
        ]);
      });

      it("peeks at a ban, and ends it with unban: the next request is decided by its windows, its refusals forgotten", async () => {
        if (!fixture.limiter.peek || !fixture.limiter.unban) return;
        const windows = windowsOf(1, 100);
        await hit(T0, windows);
        for (let i = 1; i <= BAN.threshold + 1; i++) await hit(T0 + i, windows);
        expect((await peek(T0 + 10, windows)).bannedUntil).toBe(T0 + BAN.threshold + 1 + BAN.seconds * 1000);
        expect(await unban(T0 + 20)).toBe(true);
        expect(await unban(T0 + 21)).toBe(false);
        expect((await peek(T0 + 22, windows)).bannedUntil).toBeUndefined();
        // Still over the minute's limit: refused as such, and a whole threshold of refusals again before a ban.
        for (let i = 1; i <= BAN.threshold; i++)
          expect(await hit(T0 + 30 + i, windows)).toMatchObject({
            allowed: false,
            windows: [{ exceeded: true }, { exceeded: false }],
          });
        expect((await hit(T0 + 40, windows)).banStarted).toBe(true);
        expect(await unban(T0 + 50)).toBe(true);
        expect((await hit(T0 + MINUTE, windows)).allowed).toBe(true);
        expect(await unban(T0 + MINUTE + 1, "key:never_seen")).toBe(false);
      });

      it("peeks at a bucket after a step back as a hit would find it: started over, with no ban to lift", async () => {
        if (!fixture.limiter.peek || !fixture.limiter.unban) return;
        const windows = windowsOf(1, 100);
        await hit(T0 + HOUR, windows);
        for (let i = 1; i <= BAN.threshold + 1; i++) await hit(T0 + HOUR + i, windows);
        expect(await peek(T0 + 5, windows)).toEqual({
          now: T0 + 5,
          windows: [
            { name: "minute", limit: 1, remaining: 1, resetAt: T0 + MINUTE, exceeded: false },
            { name: "day", limit: 100, remaining: 100, resetAt: NEXT_MIDNIGHT, exceeded: false },
          ],
        });
        expect(await unban(T0 + 6)).toBe(false);
      });

      it("still bans when the refusals arrive concurrently", async () => {
        const windows = windowsOf(2, 100);
        await Promise.all(Array.from({ length: 2 + BAN.threshold + 3 }, () => hit(T0, windows)));
        const next = await hit(T0 + 1, windows);
        expect(next.allowed).toBe(false);
        expect(next.bannedUntil).toBeGreaterThan(T0 + 1);
      });

      // The store's clock stepping (NTP correcting it): see `RateLimiter` in ports.ts.
      it("decides a hit read up to CLOCK_STEP_MS before the bucket's last decision at that decision's instant", async () => {
        for (let i = 0; i < 3; i++) await hit(T0 + 30_000);
        const late = await hit(T0 + 30_000 - CLOCK_STEP_MS);
        expect(late).toMatchObject({ allowed: false, now: T0 + 30_000 });
        expect(minute(late)).toMatchObject({ remaining: 0, resetAt: T0 + MINUTE });
      });

      it("starts a bucket over when its store's clock steps back further: every window restarts", async () => {
        for (let i = 0; i < 3; i++) await hit(T0 + 30_000);
        const back = await hit(T0 + 30_000 - CLOCK_STEP_MS - 1);
        expect(back).toMatchObject({ allowed: true, now: T0 + 30_000 - CLOCK_STEP_MS - 1 });
        expect(minute(back)).toMatchObject({ remaining: 2, resetAt: T0 + MINUTE });
        expect(day(back).remaining).toBe(9);
      });

      it("never refuses a client under its limits across steps back of 5 minutes and of an hour", async () => {
        // 40 a minute against 60: one hit every 1.5 s, for 90 s before each step and after the last.
        const windows = windowsOf(60, 1_000);
        const refusedAt: number[] = [];
        let now = T0 + 20_000;
        for (const step of [0, -5 * MINUTE, -HOUR]) {
          now += step;
          for (let i = 0; i < 60; i++, now += 1_500)
            if (!(await hit(now, windows, "key:key_a", NO_BAN)).allowed) refusedAt.push(now);
        }
        expect(refusedAt).toEqual([]);
      });

      it("reports no window resetting further ahead than its length after a step back", async () => {
        const windows = windowsOf(2, 100);
        for (let i = 0; i < 3; i++) await hit(T0 + HOUR + 50_000, windows, "key:key_a", NO_BAN);
        for (const decision of [
          await hit(T0 + 50_000, windows, "key:key_a", NO_BAN),
          await hit(T0 + 50_001, windows),
        ]) {
          expect(minute(decision).resetAt - decision.now).toBeLessThanOrEqual(MINUTE);
          expect(day(decision).resetAt - decision.now).toBeLessThanOrEqual(DAY);
        }
      });

      it("ends a ban when its store's clock steps back: a ban never lasts longer than its length", async () => {
        const windows = windowsOf(1, 100);
        await hit(T0 + HOUR, windows);
        for (let i = 1; i <= BAN.threshold + 1; i++) await hit(T0 + HOUR + i, windows);
        expect((await hit(T0 + HOUR + 10, windows)).bannedUntil).toBe(
          T0 + HOUR + BAN.threshold + 1 + BAN.seconds * 1000,
        );
        const back = await hit(T0 + 10, windows);
        expect(back.allowed).toBe(true);
        expect(back.bannedUntil).toBeUndefined();
      });

      it("bans after a step back for the ban's length from the refusal that began it", async () => {
        const windows = windowsOf(1, 100);
        await hit(T0 + HOUR, windows);
        for (let i = 1; i <= BAN.threshold + 1; i++) await hit(T0 + HOUR + i, windows);
        await hit(T0, windows);
        for (let i = 1; i <= BAN.threshold; i++) expect((await hit(T0 + i, windows)).bannedUntil).toBeUndefined();
        expect(await hit(T0 + 100, windows)).toMatchObject({
          banStarted: true,
          bannedUntil: T0 + 100 + BAN.seconds * 1000,
          now: T0 + 100,
        });
      });

      it("admits at most one more window's worth on a step forward", async () => {
        const windows = windowsOf(3, 100);
        for (let i = 0; i < 4; i++) await hit(T0 + 10_000, windows, "key:key_a", NO_BAN);
        const after: boolean[] = [];
        for (let i = 0; i < 5; i++) after.push((await hit(T0 + HOUR + 10_000, windows, "key:key_a", NO_BAN)).allowed);
        expect(after).toEqual([true, true, true, false, false]);
      });

      it("ends a ban at its end by the store's clock, so a step forward past it ends it", async () => {
        const windows = windowsOf(1, 100);
        await hit(T0, windows);
        for (let i = 1; i <= BAN.threshold + 1; i++) await hit(T0 + i, windows);
        expect((await hit(T0 + HOUR, windows)).allowed).toBe(true);
      });

      // Random hits against the rules as plain code (./_limiter-rules.ts), decision for decision.
      let run = 0;
      /**
       * One run's bursts, on buckets of its own (the runs share the fixture), each fired at once
       * and decided by the rules one by one. Hits fired together have no order (a limiter across
       * a network may receive them in any): each bucket must get the rules' decisions, whichever
       * of its identical hits gets which.
       */
      const decidesByTheRules = async (limits: Limits, bursts: Burst[]) => {
        run++;
        // A 5-minute second window, so that it too resets within a run.
        const windows: WindowPair = [
          { name: "minute", limit: limits.perMinute, seconds: 60 },
          { name: "five-minutes", limit: limits.perFiveMinutes, seconds: 300 },
        ];
        const ban = { threshold: limits.threshold, seconds: limits.banSeconds };
        const rules = limiterRules();
        testNow = T0 + 17;
        for (const { buckets, advanceMs } of bursts) {
          testNow += advanceMs;
          const inputs = buckets.map((bucket) => ({ bucket: `${bucket}#${run}`, windows, ban }));
          const decided = await Promise.all(inputs.map((input) => fixture.limiter.hit(input)));
          expect(byBucket(inputs, decided)).toStrictEqual(
            byBucket(
              inputs,
              inputs.map((input) => rules(input, testNow)),
            ),
          );
        }
      };
      const runs = options.runs ?? 100;
      /** Runs of up to `most` bursts under `limits`, each decided as the rules decide it. */
      const holds = (limits: fc.Arbitrary<Limits>, burst: fc.Arbitrary<Burst>, most: number) =>
        fc.assert(fc.asyncProperty(limits, fc.array(burst, { minLength: 1, maxLength: most }), decidesByTheRules), {
          numRuns: runs,
        });

      /**
       * One run's hits on the keys of two accounts, one at a time (hits of different keys that
       * share an account decided at once have no order to compare with), each as the rules decide it.
       */
      const decidesSharedByTheRules = async (limits: Limits, keyMinute: number, hits: Burst[]) => {
        run++;
        const windows = (perMinute: number, perFive: number): WindowPair => [
          { name: "minute", limit: perMinute, seconds: 60 },
          { name: "five-minutes", limit: perFive, seconds: 300 },
        ];
        const shared = windows(limits.perMinute, limits.perFiveMinutes);
        const own = windows(keyMinute, 1_000);
        const ban = { threshold: limits.threshold, seconds: limits.banSeconds };
        const rules = limiterRules();
        testNow = T0 + 17;
        for (const { buckets, advanceMs } of hits) {
          testNow += advanceMs;
          const [account, key] = buckets[0]!.split("/") as [string, string];
          const group = `{${account}#${run}}`;
          const input: HitInput = {
            bucket: `${group}${key}`,
            windows: own,
            ban,
            shared: [{ bucket: group, windows: shared }],
          };
          expect(await fixture.limiter.hit(input)).toStrictEqual(rules(input, testNow));
        }
      };

      it("decides every sequence of hits on an account's keys exactly as the rules do", async () => {
        const key = fc.constantFrom("acct_a/key:a", "acct_a/key:b", "acct_b/key:c");
        await fc.assert(
          fc.asyncProperty(
            limitsUpTo(6, 14, 4, 1),
            fc.integer({ min: 0, max: 6 }),
            fc.array(fc.record({ buckets: fc.tuple(key), advanceMs: ADVANCE_OR_STEP_BACK }), {
              minLength: 1,
              maxLength: 50,
            }),
            decidesSharedByTheRules,
          ),
          { numRuns: runs },
        );
      }, 120_000);

      it("decides every sequence of hits exactly as the rules do", async () => {
        await holds(limitsUpTo(5, 12, 4, 1), fc.record({ buckets: fc.tuple(BUCKET), advanceMs: ADVANCE }), 60);
      }, 120_000);

      it("decides every sequence of hits exactly as the rules do when the store's clock steps back", async () => {
        const burst = fc.record({
          buckets: fc.array(BUCKET, { minLength: 1, maxLength: 5 }),
          advanceMs: ADVANCE_OR_STEP_BACK,
        });
        await holds(limitsUpTo(5, 12, 4, 1), burst, 40);
      }, 120_000);

      it("decides hits fired at once exactly as the rules decide them one by one", async () => {
        const burst = fc.record({ buckets: fc.array(BUCKET, { minLength: 1, maxLength: 30 }), advanceMs: ADVANCE });
        await holds(limitsUpTo(12, 30, 6, 0), burst, 12);
      }, 120_000);
    },
  );

  describeWithFixture(
    `RateLimiter contract: ${name}, on its store's own clock`,
    () => make(undefined),
    (fixture) => {
      // The stores of these suites run on this machine: their clock is this one, give or take
      // the time a request takes. (That another server's clock changes nothing is test/scale-out's.)
      const SLACK_MS = 5_000;

      it("decides at the store's instant and places the windows around it", async () => {
        const before = Date.now();
        const decision = await fixture.limiter.hit({
          bucket: "key:key_own_clock",
          windows: windowsOf(3, 10),
          ban: BAN,
        });
        expect(decision.now).toBeGreaterThanOrEqual(before - SLACK_MS);
        expect(decision.now).toBeLessThanOrEqual(Date.now() + SLACK_MS);
        expect(minute(decision).resetAt).toBe(decision.now - (decision.now % MINUTE) + MINUTE);
        expect(day(decision).resetAt).toBe(decision.now - (decision.now % 86_400_000) + 86_400_000);
        expect(minute(decision).remaining).toBe(2);
      });

      it("counts and bans by the store's clock", async () => {
        const windows = windowsOf(1, 100);
        const decisions: Decision[] = [];
        for (let i = 0; i < 2 + BAN.threshold; i++)
          decisions.push(await fixture.limiter.hit({ bucket: "key:key_own_clock", windows, ban: BAN }));
        const banning = decisions.find((d) => d.banStarted);
        // Unless the minute turned in between (then the count started again): a whole ban, from its refusal.
        if (banning) expect(banning.bannedUntil).toBe(banning.now + BAN.seconds * 1000);
        else expect(decisions.some((d, i) => i > 0 && minute(d).resetAt !== minute(decisions[0]!).resetAt)).toBe(true);
      });
    },
  );
}
