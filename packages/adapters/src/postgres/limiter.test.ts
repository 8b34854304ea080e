import { describe, expect, it } from "vitest";
import { at, clock, DAY, NO_BAN, T0, windowsOf } from "../../../../test/_support/limiter-fixtures.js";
import { usePostgresDatabase } from "../../../../test/_support/postgres-database.js";
import type { PostgresClient } from "./_client.js";
import { POSTGRES_LIMITER_STATEMENTS, postgresLimiter } from "./limiter.js";

const database = usePostgresDatabase();

/** The client, counting the statements sent through it (the server is real; only the count is ours). */
function counting(sql: PostgresClient): { client: PostgresClient; sent: () => number } {
  let sent = 0;
  return {
    client: {
      unsafe: (query, parameters) => {
        sent++;
        return sql.unsafe(query, parameters);
      },
      begin: (run) => sql.begin(run),
    },
    sent: () => sent,
  };
}

describe("postgresLimiter", () => {
  it("decides the hits on one bucket that arrive in one turn with one statement", async () => {
    const { source, close } = await database.fresh();
    try {
      const { client, sent } = counting(source.sql);
      const limiter = postgresLimiter({ sql: client }, { clock });
      const windows = windowsOf(1_000, 10_000);
      await at(T0, limiter).hit({ bucket: "key:a", windows, ban: NO_BAN });
      const before = sent();
      const decisions = await Promise.all(
        Array.from({ length: 50 }, () => at(T0, limiter).hit({ bucket: "key:a", windows, ban: NO_BAN })),
      );
      expect(sent()).toBe(before + 1);
      expect(decisions.map((d) => d.windows[0]!.remaining)).toEqual(Array.from({ length: 50 }, (_, i) => 998 - i));
    } finally {
      await close();
    }
  });

  it("admits exactly the limit and bans after the threshold when many clients (as many processes) hit one bucket at once", () =>
    database.onClients(4, async (sources) => {
      const limiters = sources.map((each) => postgresLimiter(each, { clock }));
      const windows = windowsOf(60, 1_000);
      const ban = { threshold: 30, seconds: 600 };
      const decisions = await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          at(T0 + (i % 7), limiters[i % 4]!).hit({ bucket: "key:burst", windows, ban }),
        ),
      );
      const admitted = decisions.filter((decision) => decision.allowed);
      expect(admitted).toHaveLength(60);
      // Each admission saw its own count: the remaining numbers are all different.
      expect(new Set(admitted.map((decision) => decision.windows[0]!.remaining)).size).toBe(60);
      // 30 refusals count toward the ban; the 31st crosses the threshold and bans the bucket.
      expect(decisions.filter((decision) => !decision.allowed && decision.bannedUntil === undefined)).toHaveLength(30);
      expect(decisions.filter((decision) => decision.bannedUntil !== undefined)).toHaveLength(210);
    }));

  it("leaves a bucket that another transaction kept alive while the sweep waited for its row", async () => {
    const { source, close } = await database.fresh();
    const [sweeper, observer] = [await database.client(source), await database.client(source)];
    try {
      await at(T0, postgresLimiter(source, { clock })).hit({
        bucket: "key:a",
        windows: windowsOf(60, 1_000),
        ban: NO_BAN,
      });
      const sweep = POSTGRES_LIMITER_STATEMENTS.sweep(T0 + 3 * DAY, 100) as { sql: string; args: never[] };
      let swept: Promise<unknown> | undefined;
      await source.sql.begin(async (tx) => {
        // Another server's hit refreshes the bucket and holds its row until it commits.
        await tx.unsafe("UPDATE rate_limits SET expires_at = $1::bigint WHERE bucket = 'key:a'", [T0 + 10 * DAY]);
        swept = sweeper.sql.unsafe(sweep.sql, sweep.args).execute();
        // The sweep has found the bucket expired and waits for its row.
        for (let waited = 0; ; waited++) {
          const [row] = await observer.sql.unsafe(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM rate_limits%'",
          );
          if (row!.n > 0) break;
          if (waited > 500) throw new Error("the sweep never waited for the row");
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      });
      await swept;
      const rows = await observer.sql.unsafe("SELECT bucket FROM rate_limits");
      expect(rows.map((row) => row.bucket)).toEqual(["key:a"]);
    } finally {
      await Promise.all([sweeper.sql.end(), observer.sql.end()]);
      await close();
    }
  });
});
