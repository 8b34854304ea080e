import { mkdirSync, readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import NativeDatabase from "libsql";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { walSyncOf } from "./_wal-sync.js";

/**
 * The POSIX locks this process holds on `path`, from Linux's /proc/locks, without each line's
 * ordinal (which moves as other processes take and drop locks).
 */
function locksOn(path: string): string[] {
  const inode = statSync(path).ino;
  return readFileSync("/proc/locks", "utf8")
    .split("\n")
    .filter((line) => {
      const fields = line.trim().split(/\s+/);
      return fields[4] === String(process.pid) && fields[5]?.split(":")[2] === String(inode);
    })
    .map((line) => line.replace(/^\d+:\s*/, ""));
}

/** This process's open descriptors of `path`, from Linux's /proc/self/fd. */
function descriptorsOf(path: string): string[] {
  return readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false;
    }
  });
}

describe.runIf(process.platform === "linux")("walSyncOf", () => {
  let dir: string;
  let path: string;
  let connection: NativeDatabase.Database;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "petstore-wal-"));
    path = join(dir, "test.db");
    connection = new NativeDatabase(path);
    connection.exec("PRAGMA journal_mode = WAL");
    connection.exec("CREATE TABLE t (x)");
  });
  afterEach(async () => {
    connection.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("leaves SQLite's lock on the database file in place through fsyncs, reopen and close", async () => {
    // In WAL mode a connection holds a shared lock on the database file while it is open: it
    // is how other processes know they are not the last one.
    const held = locksOn(path);
    expect(held).toHaveLength(1);
    const sqlitesOwn = descriptorsOf(`${path}-wal`);
    const walSync = walSyncOf(path)!;
    await walSync.sync();
    walSync.reopen();
    connection.exec("INSERT INTO t VALUES (1)");
    await walSync.sync();
    walSync.close();
    // Our WAL descriptor is closed once its last fsync settled: then no lock may be gone.
    await vi.waitFor(() => expect(descriptorsOf(`${path}-wal`)).toEqual(sqlitesOwn));
    expect(locksOn(path)).toEqual(held);
  });

  it("opens the WAL at the first fsync when a new database has none yet, and never creates it", async () => {
    const other = join(dir, "new.db");
    const fresh = new NativeDatabase(other);
    try {
      fresh.exec("PRAGMA journal_mode = WAL");
      const walSync = walSyncOf(other)!;
      expect(() => statSync(`${other}-wal`)).toThrow(/ENOENT/);
      fresh.exec("CREATE TABLE t (x)");
      await walSync.sync();
      walSync.close();
    } finally {
      fresh.close();
    }
  });

  it("is undefined when this process cannot open the WAL, so that commits fsync themselves", () => {
    const other = join(dir, "odd.db");
    mkdirSync(`${other}-wal`);
    expect(walSyncOf(other)).toBeUndefined();
  });
});
