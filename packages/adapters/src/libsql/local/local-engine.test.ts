import { execFileSync } from "node:child_process";
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { StorageUnavailableError } from "@petstore/core";
import { tmpdir } from "node:os";
import { join } from "node:path";
import NativeDatabase from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fileIdentity } from "./_file-identity.js";
import { WalOpenError } from "./_wal-sync.js";
import { libsqlConnection } from "../_source.js";
import { checkLibsql } from "../check-libsql.js";
import type { Result, WriteOptions } from "../../_sql/engine.js";
import { localEngine } from "./local-engine.js";

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const insert = (name: string) => ({
  sql: "INSERT INTO items (name) VALUES (?) RETURNING id",
  args: [name],
  oneRow: true,
});

describe("localEngine", () => {
  let dir: string;
  let path: string;
  const opened: NativeDatabase.Database[] = [];
  const open = (timeout = 5_000) => {
    const connection = new NativeDatabase(path, { timeout });
    opened.push(connection);
    return connection;
  };
  const names = () =>
    (open().prepare("SELECT name FROM items ORDER BY id").all([]) as { name: string }[]).map((row) => row.name);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "petstore-local-"));
    path = join(dir, "test.db");
    const setup = open();
    setup.exec("PRAGMA journal_mode = WAL");
    setup.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)");
  });
  afterEach(async () => {
    for (const connection of opened.splice(0)) if (connection.open) connection.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("commits concurrent writes in one transaction, and answers each only once another connection can read it", async () => {
    const batches: { units: number }[] = [];
    const db = localEngine(() => open(), { observer: { onBatch: ({ units }) => batches.push({ units }) } });
    const seenAtAnswer = await Promise.all(
      ["a", "b", "c", "d"].map(async (name) => {
        const [result] = await db.write([insert(name)]);
        expect(result!.rows).toHaveLength(1);
        return names().includes(name);
      }),
    );
    expect(seenAtAnswer).toEqual([true, true, true, true]);
    expect(batches).toEqual([{ units: 4 }]);
    expect(names()).toEqual(["a", "b", "c", "d"]);
  });

  describe("readVersion", () => {
    const count = { sql: "SELECT count(*) AS n FROM items", oneRow: true };
    const n = async (read: Promise<Result>) => (await read).rows[0]!.n;
    const insertElsewhere = (name: string) => open().prepare("INSERT INTO items (name) VALUES (?)").run([name]);

    it("shares one read among the calls of one turn: another connection's commit between them is not seen", async () => {
      const db = localEngine(() => open());
      const first = db.readVersion(count);
      insertElsewhere("elsewhere");
      const second = db.readVersion(count);
      expect([await n(first), await n(second)]).toEqual([0, 0]);
    });

    it("shares no read with another statement, nor with the same one given other arguments", async () => {
      const db = localEngine(() => open());
      await db.write([insert("a")]);
      const named = (name: string) => ({
        sql: "SELECT count(*) AS n FROM items WHERE name = ?",
        args: [name],
        oneRow: true,
      });
      expect(
        await Promise.all([n(db.readVersion(named("a"))), n(db.readVersion(named("b"))), n(db.readVersion(count))]),
      ).toEqual([1, 0, 1]);
    });

    it("shares no read past the turn: another connection's commit is seen in the next", async () => {
      const db = localEngine(() => open());
      expect(await n(db.readVersion(count))).toBe(0);
      insertElsewhere("elsewhere");
      await nextTurn();
      expect(await n(db.readVersion(count))).toBe(1);
    });

    it.each<[string, WriteOptions | undefined]>([
      ["a write batch", undefined],
      ["a write batch of counts alone", { survives: "process-crash" }],
    ])(
      "shares no read past %s: a write answered after a shared read began is seen by the next call, in the same turn",
      async (_, options) => {
        const db = localEngine(() => open());
        const write = db.write([insert("a")], options);
        // Begun before the batch, in the turn the write's answer comes in.
        const before = db.readVersion(count);
        await write;
        expect(await n(db.readVersion(count))).toBe(1);
        expect(await n(before)).toBe(0);
      },
    );
  });

  it("fails only the caller whose statement failed; the others in its transaction commit", async () => {
    const db = localEngine(() => open());
    await db.write([insert("taken")]);
    const outcomes = await Promise.allSettled([
      db.write([insert("a")]),
      db.write([insert("taken")]),
      db.write([insert("b")]),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({
      code: expect.stringMatching(/^SQLITE_CONSTRAINT/),
    });
    expect(names()).toEqual(["taken", "a", "b"]);
  });

  it("undoes every statement of a unit when one of them fails, and nothing of the other units", async () => {
    const db = localEngine(() => open());
    await db.write([insert("taken")]);
    const outcomes = await Promise.allSettled([
      db.write([insert("first"), insert("taken")]),
      db.write([insert("other")]),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["rejected", "fulfilled"]);
    expect(names()).toEqual(["taken", "other"]);
  });

  it("commits without an fsync only a batch of process-crash writes, and still fsyncs once a second", async () => {
    let now = 10_000;
    const db = localEngine(() => open(), { clock: () => now });
    // What SQLite does at the connection's next COMMIT: FULL fsyncs the WAL, NORMAL does not.
    const synchronous = async () =>
      ({ 1: "NORMAL", 2: "FULL" })[(await db.read("PRAGMA synchronous")).rows[0]!.synchronous as number];
    await db.write([insert("first")], { survives: "process-crash" });
    // The first commit of a connection fsyncs: none ran within the last second.
    expect(await synchronous()).toBe("FULL");
    await db.write([insert("counted")], { survives: "process-crash" });
    expect(await synchronous()).toBe("NORMAL");
    await Promise.all([
      db.write([insert("counted too")], { survives: "process-crash" }),
      db.write([insert("acknowledged")]),
    ]);
    expect(await synchronous()).toBe("FULL");
    await db.write([insert("counted again")], { survives: "process-crash" });
    expect(await synchronous()).toBe("NORMAL");
    now += 600;
    await db.write([insert("0.6 s later")], { survives: "process-crash" });
    expect(await synchronous()).toBe("NORMAL");
    now += 600;
    await db.write([insert("1.2 s after the last fsync")], { survives: "process-crash" });
    expect(await synchronous()).toBe("FULL");
  });

  it("rejects every caller of a batch that could not start because another connection held the write lock", async () => {
    const db = localEngine(() => open(20));
    const other = open();
    other.exec("BEGIN IMMEDIATE");
    const outcomes = await Promise.allSettled([db.write([insert("a")]), db.write([insert("b")])]);
    other.exec("ROLLBACK");
    expect(outcomes.map((outcome) => (outcome as PromiseRejectedResult).reason?.cause?.code)).toEqual([
      "SQLITE_BUSY",
      "SQLITE_BUSY",
    ]);
    await db.write([insert("after")]);
    expect(names()).toEqual(["after"]);
  });

  it("commits again after a statement outside a transaction met the write lock of another connection", async () => {
    const db = localEngine(() => open(20));
    const other = open();
    other.exec("BEGIN IMMEDIATE");
    // A write outside `write`: SQLite leaves it unfinished, which would block every later COMMIT.
    await expect(db.read({ sql: "INSERT INTO items (name) VALUES (?)", args: ["locked out"] })).rejects.toMatchObject({
      cause: { code: "SQLITE_BUSY" },
    });
    other.exec("ROLLBACK");
    await db.write([insert("after")]);
    await db.write([insert("and again")]);
    expect(names()).toEqual(["after", "and again"]);
  });

  it("prepares each statement once per connection, and again on the connection opened after a lock error", async () => {
    let connections = 0;
    const db = localEngine(() => {
      connections += 1;
      return open(20);
    });
    const count = { sql: "SELECT count(*) AS n FROM items", oneRow: true };
    // SQLite's own list of the connection's prepared statements, with how often each ran.
    const prepared = async () =>
      (await db.read("SELECT sql, run FROM sqlite_stmt")).rows.filter((row) => row.sql === count.sql);
    for (let i = 0; i < 3; i++) expect((await db.read(count)).rows).toEqual([{ n: 0 }]);
    expect(await prepared()).toEqual([{ sql: count.sql, run: 3 }]);
    const other = open();
    other.exec("BEGIN IMMEDIATE");
    await expect(db.read({ sql: "INSERT INTO items (name) VALUES ('locked out')" })).rejects.toBeInstanceOf(
      StorageUnavailableError,
    );
    other.exec("ROLLBACK");
    expect((await db.read(count)).rows).toEqual([{ n: 0 }]);
    expect(connections).toBe(2);
    expect(await prepared()).toEqual([{ sql: count.sql, run: 1 }]);
  });

  describe("with the WAL fsynced beside the event loop", () => {
    /** A WalSync whose fsyncs finish when the test says so. */
    function controlledSync() {
      const pending: { resolve: () => void; reject: (error: unknown) => void }[] = [];
      return {
        walSync: {
          sync: () => new Promise<void>((resolve, reject) => pending.push({ resolve, reject })),
          reopen: () => {},
          close: () => {},
        },
        pending,
        finish: () => pending.shift()!.resolve(),
        fail: (error: unknown) => pending.shift()!.reject(error),
      };
    }
    /** An engine whose fsyncs finish or fail when the test says so (`sync`). */
    const onControlledSync = () => {
      const sync = controlledSync();
      return { sync, db: localEngine(() => open(), { walSync: sync.walSync }) };
    };
    const settledSoon = async (promise: Promise<unknown>) => {
      let settled = false;
      void promise.then(
        () => (settled = true),
        () => (settled = true),
      );
      for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
      return settled;
    };

    it("commits without waiting for the disk and answers an acknowledged write only after the fsync that followed its commit", async () => {
      const { sync, db } = onControlledSync();
      const acknowledged = db.write([insert("rex")]);
      expect(await settledSoon(acknowledged)).toBe(false);
      // Committed (another connection sees it), with synchronous NORMAL (1), and one fsync asked for.
      expect(names()).toEqual(["rex"]);
      expect((await db.readVersion("PRAGMA synchronous")).rows).toEqual([{ synchronous: 1 }]);
      expect(sync.pending).toHaveLength(1);
      sync.finish();
      expect((await acknowledged)[0]!.rows).toHaveLength(1);
    });

    it("answers counts at their commit, and writes committed while an fsync runs after the next one", async () => {
      const { sync, db } = onControlledSync();
      const first = db.write([insert("first")]);
      expect(await settledSoon(first)).toBe(false);
      // A count needs no fsync of its own (one ran less than a second ago? none yet: one is due,
      // but the count does not wait for it).
      expect(await settledSoon(db.write([insert("counted")], { survives: "process-crash" }))).toBe(true);
      const second = db.write([insert("second")]);
      expect(await settledSoon(second)).toBe(false);
      expect(sync.pending).toHaveLength(1);
      sync.finish();
      await first;
      // The running fsync began before "second" committed: it waits for one of its own.
      expect(await settledSoon(second)).toBe(false);
      expect(sync.pending).toHaveLength(1);
      sync.finish();
      await second;
    });

    it("after a failed fsync answers every durable write and read as storage unavailable (a 503), for good", async () => {
      const { sync, db } = onControlledSync();
      const write = db.write([insert("rex")]);
      expect(await settledSoon(write)).toBe(false);
      sync.fail(Object.assign(new Error("EIO"), { code: "EIO" }));
      const failed = { message: "the database's log could not be written to disk", cause: { code: "EIO" } };
      await expect(write).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(write).rejects.toMatchObject(failed);
      // Linux may have dropped the pages that failed: a later fsync could succeed without them.
      await expect(db.write([insert("fido")])).rejects.toMatchObject(failed);
      await expect(db.read("SELECT 1")).rejects.toMatchObject(failed);
      expect(sync.pending).toHaveLength(0);
      expect(names()).toEqual(["rex", "fido"]);
    });

    it("answers every acknowledged write of one batch after the same single fsync", async () => {
      const { sync, db } = onControlledSync();
      const writes = ["a", "b", "c"].map((name) => db.write([insert(name)]));
      expect(await settledSoon(Promise.race(writes))).toBe(false);
      expect(sync.pending).toHaveLength(1);
      sync.finish();
      await Promise.all(writes);
      expect(sync.pending).toHaveLength(0);
    });

    it("answers 503 when the WAL cannot be opened for an fsync, without condemning later ones", async () => {
      const { sync, db } = onControlledSync();
      const write = db.write([insert("rex")]);
      expect(await settledSoon(write)).toBe(false);
      sync.fail(new WalOpenError(Object.assign(new Error("EMFILE"), { code: "EMFILE" })));
      await expect(write).rejects.toBeInstanceOf(StorageUnavailableError);
      // No fsync failed: the next one covers every page written before it.
      const next = db.write([insert("fido")]);
      expect(await settledSoon(next)).toBe(false);
      sync.finish();
      await next;
      const durable = db.read("SELECT 1 AS one");
      expect(await settledSoon(durable)).toBe(false);
      sync.finish();
      await expect(durable).resolves.toMatchObject({ rows: [{ one: 1 }] });
    });

    it("fsyncs the WAL after batches of counts alone at least once a second, nobody waiting for it", async () => {
      let now = 10_000;
      const sync = controlledSync();
      const fsyncs: number[] = [];
      const db = localEngine(() => open(), {
        clock: () => now,
        walSync: sync.walSync,
        observer: { onFsync: () => fsyncs.push(now) },
      });
      const count = (name: string) => db.write([insert(name)], { survives: "process-crash" });
      // None ran yet: the first batch is due one, and is answered without waiting for it.
      await count("first");
      expect(sync.pending).toHaveLength(1);
      sync.finish();
      await nextTurn();
      expect(fsyncs).toEqual([10_000]);
      await count("within the second");
      now += 600;
      await count("0.6 s later");
      expect(sync.pending).toHaveLength(0);
      now += 600;
      await count("1.2 s after the last fsync began");
      expect(sync.pending).toHaveLength(1);
      sync.finish();
      await nextTurn();
      expect(fsyncs).toEqual([10_000, 11_200]);
    });

    it("answers a read once everything committed before it is on disk", async () => {
      const sync = controlledSync();
      // A monotonic clock past the first second: the count is due the first fsync (on the default
      // clock, performance.now(), it was not in a worker younger than a second).
      const db = localEngine(() => open(), { walSync: sync.walSync, clock: () => 10_000 });
      await db.write([insert("counted")], { survives: "process-crash" });
      expect(sync.pending).toHaveLength(1);
      // An fsync that began before this call does not count: the reader waits for the next.
      const durable = db.read("SELECT count(*) AS n FROM items");
      sync.finish();
      expect(await settledSoon(durable)).toBe(false);
      expect(sync.pending).toHaveLength(1);
      sync.finish();
      await durable;
    });
  });

  it("commits every batch with synchronous FULL on a database not in WAL mode, counts included", async () => {
    const db = localEngine(() => open(), { wal: false });
    const synchronous = async () => (await db.read("PRAGMA synchronous")).rows[0]!.synchronous;
    await db.write([insert("counted")], { survives: "process-crash" });
    await db.write([insert("counted too")], { survives: "process-crash" });
    // FULL (2): the first batch was due an fsync anyway; the second, within the second, was not.
    expect(await synchronous()).toBe(2);
  });

  it("answers a read at once without a WAL sync: commits are durable when visible (synchronous FULL)", async () => {
    const db = localEngine(() => open());
    await db.write([insert("rex")]);
    await expect(db.read("SELECT count(*) AS n FROM items")).resolves.toMatchObject({ rows: [{ n: 1 }] });
  });

  it("answers storage unavailable once closed", async () => {
    const db = localEngine(() => open());
    await db.read("SELECT 1");
    db.close();
    const closed = { message: "the database connection is closed" };
    await expect(db.read("SELECT 1")).rejects.toBeInstanceOf(StorageUnavailableError);
    await expect(db.read("SELECT 1")).rejects.toMatchObject(closed);
    await expect(db.write([insert("late")])).rejects.toMatchObject(closed);
  });

  it("answers no write into a database file, WAL or shm that is no longer at its path, and serves again once it is back", async () => {
    const db = localEngine(() => open(), { files: fileIdentity(path) });
    await db.write([insert("before")]);
    for (const file of [path, `${path}-wal`, `${path}-shm`]) {
      await rename(file, `${file}.moved`);
      await expect(db.write([insert(`while ${file} is away`)])).rejects.toThrow(/removed or replaced while open/);
      await rename(`${file}.moved`, file);
      await db.write([insert(`after ${file} is back`)]);
    }
    await writeFile(`${path}.other`, "");
    await rename(`${path}.other`, path);
    await expect(db.write([insert("into a replaced file")])).rejects.toBeInstanceOf(StorageUnavailableError);
  });

  it("leaves batches of counts alone unchecked (three stat calls each), and tells the moved file as its problem", async () => {
    const db = localEngine(() => open(), { files: fileIdentity(path) });
    await db.write([insert("before")]);
    expect(db.problem()).toBeUndefined();
    await rename(path, `${path}.moved`);
    // A count is acknowledged as nothing: the next acknowledged write, or a health check, finds the file gone.
    await db.write([insert("a count")], { survives: "process-crash" });
    expect(db.problem()).toMatch(/removed or replaced while open/);
    await expect(db.write([insert("a pet")])).rejects.toThrow(/removed or replaced while open/);
    await rename(`${path}.moved`, path);
    expect(db.problem()).toBeUndefined();
  });
});

describe.runIf(process.platform === "linux" && process.getuid?.() === 0)(
  "localEngine's watch on the WAL (chattr: root only)",
  () => {
    it("reports failing checkpoints once the WAL passes 64 MB, and forgets them once checkpoints succeed", async () => {
      const dir = await mkdtemp(join(tmpdir(), "petstore-wal-watch-"));
      const path = join(dir, "test.db");
      const setup = new NativeDatabase(path);
      setup.exec("PRAGMA journal_mode = WAL");
      setup.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
      // What the health check writes (see migrations).
      setup.exec("CREATE TABLE health_probe (id INTEGER PRIMARY KEY, checked_at INTEGER NOT NULL)");
      setup.close();
      const clock = { now: 1_000_000 };
      const failures: string[] = [];
      const db = localEngine(() => new NativeDatabase(path), {
        clock: () => clock.now,
        walPath: `${path}-wal`,
        observer: { onCheckpointFailed: (reason) => failures.push(reason) },
      });
      const megabyte = "x".repeat(1024 * 1024);
      const writeMegabytes = async (count: number) => {
        for (let i = 0; i < count; i++)
          await db.write([{ sql: "INSERT INTO items (body) VALUES (?)", args: [megabyte] }]);
      };
      try {
        await writeMegabytes(1);
        // The database file takes no more pages: SQLite's own checkpoints fail without a word.
        execFileSync("chattr", ["+i", path]);
        try {
          await writeMegabytes(70);
          expect(db.problem()).toBeUndefined();
          // The next look, 10 s later, finds the WAL past the bound and checkpoints by hand.
          clock.now += 10_000;
          await writeMegabytes(1);
          expect(db.problem()).toMatch(/^checkpoints fail \(.+\): the WAL holds \d+\.\d MB not in the database file$/);
          expect(failures).toEqual([db.problem()]);
          // Writes themselves still succeed meanwhile: only the health check reports it.
          await writeMegabytes(1);
          await expect(checkLibsql(libsqlConnection(db, () => {}))).rejects.toThrow(
            new StorageUnavailableError(db.problem()!),
          );
        } finally {
          execFileSync("chattr", ["-i", path]);
        }
        clock.now += 10_000;
        await writeMegabytes(1);
        expect(db.problem()).toBeUndefined();
        expect(failures).toHaveLength(1);
      } finally {
        db.close();
        await rm(dir, { recursive: true, force: true });
      }
    }, 60_000);
  },
);
