import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDatabase } from "../../../../test/_support/libsql-database.js";
import { at, clock, DAY, MINUTE, NO_BAN, T0, windowsOf } from "../../../../test/_support/limiter-fixtures.js";
import type { LibsqlConnection } from "./_source.js";
import { connectLibsql } from "./local/connect-libsql.js";
import { libsqlLimiter } from "./limiter.js";
import { migrateLibsql } from "./migrations.js";

async function memoryDatabase(): Promise<LibsqlConnection> {
  const db = await connectLibsql({ url: ":memory:" });
  await migrateLibsql(db);
  return db;
}

describe("libsqlLimiter", () => {
  let client: LibsqlConnection;
  beforeEach(async () => {
    client = await memoryDatabase();
  });
  afterEach(() => client.close());

  it("decides the hits on one bucket that arrive in one turn with one statement", async () => {
    const windows = windowsOf(1_000, 10_000);
    const limiter = libsqlLimiter(client, { clock });
    await at(T0, limiter).hit({ bucket: "key:a", windows, ban: NO_BAN });
    const changes = async () => Number((await client.execute("SELECT total_changes() AS n"))[0]!.n);
    const before = await changes();
    const decisions = await Promise.all(
      Array.from({ length: 50 }, () => at(T0, limiter).hit({ bucket: "key:a", windows, ban: NO_BAN })),
    );
    expect(await changes()).toBe(before + 1);
    expect(decisions.map((d) => d.windows[0]!.remaining)).toEqual(Array.from({ length: 50 }, (_, i) => 998 - i));
  });

  it("admits exactly the limit of hits fired at once on two connections to one file, each connection committing them together", async () => {
    const database = await tempDatabase();
    try {
      const limiters = [database.db, await database.connect()].map((each) => libsqlLimiter(each, { clock }));
      const windows = windowsOf(20, 1_000);
      const decisions = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          at(T0 + i, limiters[i % 2]!).hit({ bucket: "key:burst", windows, ban: NO_BAN }),
        ),
      );
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(20);
      // Each admission saw its own count: the remaining numbers are all different.
      const remaining = decisions
        .filter((decision) => decision.allowed)
        .map((decision) => decision.windows[0]!.remaining);
      expect(new Set(remaining).size).toBe(20);
    } finally {
      await database.close();
    }
  });

  it("deletes expired buckets on every 1000th statement (here one per hit) and keeps live and banned ones", async () => {
    const limiter = libsqlLimiter(client, { clock });
    const windows = windowsOf(1, 100);
    const hit = (bucket: string, now: number, ban = NO_BAN) => at(now, limiter).hit({ bucket, windows, ban });
    // Banned for three days by its first refusal.
    const longBan = { threshold: 0, seconds: 3 * 86_400 };
    await hit("ip:banned", T0, longBan);
    expect((await hit("ip:banned", T0, longBan)).bannedUntil).toBe(T0 + 3 * DAY);
    for (let i = 0; i < 996; i++) await hit(`ip:192.0.2.${i}`, T0);
    const later = T0 + 2 * DAY;
    await hit("key:live", later);
    const rows = async () => Number((await client.execute("SELECT count(*) AS n FROM rate_limits"))[0]!.n);
    expect(await rows()).toBe(998);

    const thousandth = await hit("key:live", later + MINUTE);
    expect(await rows()).toBe(2);
    expect(thousandth.windows[1]!.remaining).toBe(98);
    expect((await hit("ip:banned", later)).bannedUntil).toBe(T0 + 3 * DAY);
  });
});
