import type { Decision, HitInput } from "@petstore/core";
import NativeDatabase from "libsql";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { DurableObjectState } from "./_storage-engine.js";
import { LIBSQL_COLUMNS } from "../libsql/migrations.js";
import { PetstoreRateLimiter } from "./petstore-rate-limiter.js";

/**
 * An object's state as the runtime hands it over, on a SQLite database of the `libsql`
 * package: `sql.exec`, `transactionSync`, an alarm that is only recorded, and `deleteAll`.
 * (The contract suites run the class in workerd itself; this looks at its alarm.)
 */
function objectState() {
  const db = new NativeDatabase(":memory:");
  const alarms: number[] = [];
  const tables = () =>
    (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all([]) as { name: string }[]).map(
      (row) => row.name,
    );
  const state: DurableObjectState = {
    storage: {
      sql: {
        exec(query, ...bindings) {
          const statement = db.prepare(query);
          if (statement.reader) {
            const rows = statement.all(bindings) as Record<string, unknown>[];
            return { toArray: () => rows, rowsWritten: 0 };
          }
          return { toArray: () => [], rowsWritten: statement.run(bindings).changes };
        },
      },
      transactionSync: (run) => db.transaction(run)(),
      // The runtime keeps one alarm per object: the last one set, until it runs.
      setAlarm: async (time) => void alarms.push(time),
      getAlarm: async () => alarms.at(-1) ?? null,
      deleteAll: async () => {
        for (const name of tables()) db.exec(`DROP TABLE ${name}`);
      },
    },
  };
  const columns = (table: string) =>
    (db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all([]) as { name: string }[]).map((row) => row.name);
  return { state, alarms, tables, columns, db };
}

/** A test's clock (sent with each hit), two days behind the runtime's: the object must keep them apart. */
const NOW = Date.UTC(2030, 0, 15, 12, 0, 10);
const RUNTIME_NOW = NOW + 2 * 86_400_000 + 7_000;
const MIDNIGHT = Date.UTC(2030, 0, 16);

const hit = async (
  object: PetstoreRateLimiter,
  now = NOW,
  { bucket = "key:key_a", threshold = 30 } = {},
): Promise<Decision> => {
  const input: HitInput & { now: number } = {
    bucket,
    windows: [
      { name: "minute", limit: 2, seconds: 60 },
      { name: "day", limit: 100, seconds: 86_400 },
    ],
    ban: { threshold, seconds: 600 },
    now,
  };
  const response = await object.fetch(
    new Request("https://rate-limiter.invalid/hit", { method: "POST", body: JSON.stringify(input) }),
  );
  return (await response.json()) as Decision;
};

describe("PetstoreRateLimiter", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(RUNTIME_NOW);
  });
  afterEach(() => vi.useRealTimers());

  it("sets its alarm for the whole minute after the bucket is over, on the runtime's clock", async () => {
    const { state, alarms } = objectState();
    const object = new PetstoreRateLimiter(state);
    expect((await hit(object)).allowed).toBe(true);
    // The day window resets at midnight of the test's clock: that far ahead on the runtime's.
    const over = RUNTIME_NOW + (MIDNIGHT - NOW);
    expect(alarms).toEqual([Math.ceil(over / 60_000) * 60_000]);
    await hit(object, NOW + 500);
    expect(alarms).toHaveLength(1);
  });

  it("deletes its storage on the alarm, and counts the bucket afresh on the next hit", async () => {
    const { state, alarms, tables } = objectState();
    const object = new PetstoreRateLimiter(state);
    await hit(object);
    expect((await hit(object)).windows[0]!.remaining).toBe(0);
    await object.alarm();
    expect(tables()).toEqual([]);
    const fresh = await hit(object);
    expect(fresh.allowed).toBe(true);
    expect(fresh.windows[0]!.remaining).toBe(1);
    expect(alarms).toHaveLength(2);
  });

  it("never moves its alarm before a ban another bucket of its account holds, after a restart too", async () => {
    const { state, alarms } = objectState();
    // Key A of the account is banned at 23:55 for ten minutes: past midnight, when key B's day ends.
    const late = MIDNIGHT - 5 * 60_000;
    const keyA = { bucket: "{acct_1}key:key_a", threshold: 1 };
    let decision: Decision | undefined;
    for (let i = 0; i < 4; i++) decision = await hit(new PetstoreRateLimiter(state), late, keyA);
    const banEnd = RUNTIME_NOW + (decision!.bannedUntil! - late);
    // A new instance (the object was evicted) decides key B's first hit, whose buckets end at midnight.
    await hit(new PetstoreRateLimiter(state), late + 60_000, { bucket: "{acct_1}key:key_b" });
    expect(alarms.at(-1)).toBeGreaterThanOrEqual(banEnd);
  });

  it("keeps its counters for a new instance on the same storage, as after a restart", async () => {
    const { state } = objectState();
    await hit(new PetstoreRateLimiter(state));
    await hit(new PetstoreRateLimiter(state));
    expect((await hit(new PetstoreRateLimiter(state))).allowed).toBe(false);
  });

  it("holds the libSQL schema's rate_limits table, made by the libSQL migrations themselves", async () => {
    const { state, columns } = objectState();
    await hit(new PetstoreRateLimiter(state));
    expect(columns("rate_limits").sort()).toEqual([...LIBSQL_COLUMNS.rate_limits!].sort());
  });

  it("brings the table of an object an earlier release made up to date, keeping its counts", async () => {
    const { state, columns, db } = objectState();
    // The table as releases before decided_at made it (libSQL migrations 1 and 3), with no versions kept.
    db.exec(`CREATE TABLE rate_limits (bucket TEXT PRIMARY KEY, window0_start INTEGER NOT NULL, window0_count INTEGER NOT NULL,
      window1_start INTEGER NOT NULL, window1_count INTEGER NOT NULL, refusals INTEGER NOT NULL, banned_until INTEGER NOT NULL,
      expires_at INTEGER NOT NULL, admitted INTEGER NOT NULL DEFAULT 0, refused INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID`);
    const minute = Math.floor(NOW / 60_000) * 60_000;
    db.exec(
      `INSERT INTO rate_limits VALUES ('key:key_a', ${minute}, 2, ${MIDNIGHT - 86_400_000}, 2, 0, 0, ${MIDNIGHT}, 0, 0)`,
    );
    const decision = await hit(new PetstoreRateLimiter(state));
    expect(decision.allowed).toBe(false); // its two hits of this minute were kept
    expect(columns("rate_limits")).toContain("decided_at");
  });
});
