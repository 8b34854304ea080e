import { expect, it } from "vitest";
import { describeOnMovedClock, describeWithFixture } from "./_fixture.js";
import type { MakeKeys } from "./api-keys-contract.js";
import type { NewApiKeyRecord, UsageCounts, UsageTally } from "../ports.js";

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** Noon of a UTC day: its minutes and the day's start are easy to tell apart. */
const T0 = Date.UTC(2030, 0, 15, 12, 0, 0);
const DAY0 = Date.UTC(2030, 0, 15);

const keyOf = (n: number): NewApiKeyRecord => ({
  id: `key_${n}`,
  hash: n.toString(16).padStart(64, "0"),
  plan: "free",
  createdAt: T0 - DAY,
});
const counts = (admitted: number, rateLimited = 0, banned = 0, unauthorized = 0): UsageCounts => ({
  admitted,
  rateLimited,
  banned,
  unauthorized,
});
const tally = (keyId: string, minute: number, of: UsageCounts, lastUsedAt?: number): UsageTally => ({
  keyId,
  minute,
  ...of,
  ...(lastUsedAt !== undefined && { lastUsedAt }),
});

/**
 * The `KeyUsage` contract, which every key store keeps: tallies added to their minute and UTC
 * day (additive, so that writers at once lose nothing), one key's rows in a span, the keys
 * that used the most, last uses that never move back, and the sweep of rows older than kept,
 * by the store's clock. `make` is the key store's (`apiKeysContract`'s).
 * @example keyUsageContract("memory", async (clock) => ({ keys: memoryKeys({ clock }) }));
 */
export function keyUsageContract(name: string, make: MakeKeys): void {
  describeOnMovedClock(`KeyUsage contract: ${name}`, T0, make, (fixture, clock) => {
    it("adds a tally to its minute and to the minute's UTC day", async () => {
      await fixture.keys.addUsage([
        tally("key_1", T0 - 2 * MINUTE, counts(3, 1, 0, 2)),
        tally("key_1", T0, counts(5, 0, 4, 0)),
        tally("key_1", DAY0 - MINUTE, counts(7)),
      ]);
      expect(await fixture.keys.usage({ keyId: "key_1", resolution: "minute", from: 0, to: T0 + DAY })).toEqual([
        { at: DAY0 - MINUTE, ...counts(7) },
        { at: T0 - 2 * MINUTE, ...counts(3, 1, 0, 2) },
        { at: T0, ...counts(5, 0, 4, 0) },
      ]);
      expect(await fixture.keys.usage({ keyId: "key_1", resolution: "day", from: 0, to: T0 + DAY })).toEqual([
        { at: DAY0 - DAY, ...counts(7) },
        { at: DAY0, ...counts(8, 1, 4, 2) },
      ]);
    });

    it("adds to what is there, and adds tallies of one key and minute given twice", async () => {
      await fixture.keys.addUsage([tally("key_1", T0, counts(1, 2, 3, 4))]);
      await fixture.keys.addUsage([tally("key_1", T0, counts(10, 20, 30, 40)), tally("key_1", T0, counts(1))]);
      expect(await fixture.keys.usage({ keyId: "key_1", resolution: "minute", from: T0, to: T0 + 1 })).toEqual([
        { at: T0, ...counts(12, 22, 33, 44) },
      ]);
    });

    it("loses no count when servers add to the same rows at once", async () => {
      await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          fixture.keys.addUsage([tally("key_1", T0, counts(1, i)), tally("key_2", T0 + MINUTE, counts(2))]),
        ),
      );
      const day = await fixture.keys.usage({ keyId: "key_1", resolution: "day", from: DAY0, to: DAY0 + DAY });
      expect(day).toEqual([{ at: DAY0, ...counts(12, 66) }]);
      expect(await fixture.keys.usage({ keyId: "key_2", resolution: "minute", from: T0, to: T0 + HOUR })).toEqual([
        { at: T0 + MINUTE, ...counts(24) },
      ]);
    });

    it("reads one key's rows whose span starts in [from, to), without the other keys'", async () => {
      await fixture.keys.addUsage(
        [0, 1, 2, 3].flatMap((n) => [
          tally("key_1", T0 + n * MINUTE, counts(n + 1)),
          tally("key_2", T0 + n * MINUTE, counts(100)),
        ]),
      );
      const read = await fixture.keys.usage({
        keyId: "key_1",
        resolution: "minute",
        from: T0 + MINUTE,
        to: T0 + 3 * MINUTE,
      });
      expect(read).toEqual([
        { at: T0 + MINUTE, ...counts(2) },
        { at: T0 + 2 * MINUTE, ...counts(3) },
      ]);
      expect(await fixture.keys.usage({ keyId: "key_3", resolution: "minute", from: 0, to: T0 + DAY })).toEqual([]);
    });

    it("moves each key's last use to its tallies' latest, never back, and not for a tally without one", async () => {
      await fixture.keys.insert(keyOf(1));
      await fixture.keys.insert(keyOf(2));
      await fixture.keys.insert(keyOf(3));
      await fixture.keys.addUsage([
        tally("key_1", T0, counts(1), T0 + 500),
        tally("key_1", T0 + MINUTE, counts(1), T0 + MINUTE + 7),
        tally("key_2", T0, counts(1), T0 + 900),
        tally("key_3", T0, counts(0, 0, 0, 5)),
        tally("key_404", T0, counts(1), T0),
      ]);
      await fixture.keys.addUsage([tally("key_1", T0, counts(1), T0 + 400)]);
      expect((await fixture.keys.get("key_1"))!.lastUsedAt).toBe(T0 + MINUTE + 7);
      expect((await fixture.keys.get("key_2"))!.lastUsedAt).toBe(T0 + 900);
      expect((await fixture.keys.get("key_3"))!.lastUsedAt).toBeUndefined();
      expect(await fixture.keys.get("key_404")).toBeUndefined();
    });

    it("takes an empty batch", async () => {
      await fixture.keys.addUsage([]);
      expect(
        await fixture.keys.topUsage({ resolution: "day", from: 0, to: T0 + DAY, by: "requests", limit: 20 }),
      ).toEqual([]);
    });

    it("ranks the keys by requests or by refusals, most first, a tie by id, at most `limit`", async () => {
      await fixture.keys.addUsage([
        tally("key_a", T0, counts(10, 0, 0, 0)),
        tally("key_b", T0, counts(1, 2, 3, 4)),
        tally("key_b", T0 + MINUTE, counts(0, 0, 0, 1)),
        tally("key_c", T0, counts(5, 0, 0, 5)),
        tally("key_d", T0, counts(0, 1, 0, 0)),
        tally("key_e", T0 - HOUR, counts(50, 50)),
      ]);
      const top = (by: "requests" | "refusals", limit = 20) =>
        fixture.keys.topUsage({ resolution: "minute", from: T0, to: T0 + HOUR, by, limit });
      expect(await top("requests")).toEqual([
        { keyId: "key_b", ...counts(1, 2, 3, 5) },
        { keyId: "key_a", ...counts(10) },
        { keyId: "key_c", ...counts(5, 0, 0, 5) },
        { keyId: "key_d", ...counts(0, 1) },
      ]);
      expect((await top("refusals")).map((total) => total.keyId)).toEqual(["key_b", "key_c", "key_d"]);
      expect((await top("requests", 2)).map((total) => total.keyId)).toEqual(["key_b", "key_a"]);
      const days = await fixture.keys.topUsage({
        resolution: "day",
        from: DAY0,
        to: DAY0 + DAY,
        by: "refusals",
        limit: 1,
      });
      expect(days).toEqual([{ keyId: "key_e", ...counts(50, 50) }]);
    });

    it("sweeps minutes older than 49 h and days older than 401 days when it adds, by the store's clock", async () => {
      await fixture.keys.addUsage([
        tally("key_1", T0 - 49 * HOUR, counts(1)),
        tally("key_1", T0 - 49 * HOUR - MINUTE, counts(2)),
        tally("key_1", DAY0 - 400 * DAY, counts(3)),
      ]);
      const minutes = () => fixture.keys.usage({ keyId: "key_1", resolution: "minute", from: 0, to: T0 + DAY });
      const days = () => fixture.keys.usage({ keyId: "key_1", resolution: "day", from: 0, to: T0 + DAY });
      expect((await minutes()).map((row) => row.at)).toEqual([T0 - 49 * HOUR]);
      // The day of the 49 h old minute holds it and the swept one's count.
      expect(await days()).toEqual([
        { at: DAY0 - 400 * DAY, ...counts(3) },
        { at: DAY0 - 2 * DAY, ...counts(3) },
      ]);
      clock.now = T0 + 2 * DAY;
      await fixture.keys.addUsage([tally("key_2", T0 + 2 * DAY, counts(1))]);
      expect(await minutes()).toEqual([]);
      expect((await days()).map((row) => row.at)).toEqual([DAY0 - 2 * DAY]);
    });
  });

  describeWithFixture(
    `KeyUsage contract: ${name}, on its store's own clock`,
    () => make(undefined),
    (fixture) => {
      it("sweeps by the store's clock", async () => {
        // The stores of these suites run on this machine: their clock is this one, give or take a request.
        const minute = Date.now() - (Date.now() % MINUTE);
        await fixture.keys.addUsage([tally("key_1", minute, counts(1)), tally("key_1", minute - 50 * HOUR, counts(1))]);
        const rows = await fixture.keys.usage({ keyId: "key_1", resolution: "minute", from: 0, to: minute + HOUR });
        expect(rows.map((row) => row.at)).toEqual([minute]);
      });
    },
  );
}
