import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import NativeDatabase from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { walSyncOf } from "./_wal-sync.js";

describe("walSyncOf", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "petstore-wal-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("fsyncs the WAL file of a database in WAL mode", async () => {
    const path = join(dir, "test.db");
    const connection = new NativeDatabase(path);
    try {
      connection.exec("PRAGMA journal_mode = WAL");
      connection.exec("CREATE TABLE t (x)");
      const walSync = walSyncOf(path);
      expect(walSync).toBeDefined();
      await expect(walSync!.sync()).resolves.toBeUndefined();
      // A new descriptor after reopen; the old one is closed once its fsync is done.
      const running = walSync!.sync();
      walSync!.reopen();
      await expect(running).resolves.toBeUndefined();
      await expect(walSync!.sync()).resolves.toBeUndefined();
    } finally {
      connection.close();
    }
  });

  it("opens the WAL file only at the first fsync: a new database has none before its first commit", async () => {
    const path = join(dir, "new.db");
    const connection = new NativeDatabase(path);
    try {
      const walSync = walSyncOf(path);
      expect(walSync).toBeDefined();
      connection.exec("PRAGMA journal_mode = WAL");
      connection.exec("CREATE TABLE t (x)");
      await expect(walSync!.sync()).resolves.toBeUndefined();
      walSync!.close();
    } finally {
      connection.close();
    }
  });

  it("is undefined when this process cannot open the database file, so commits fsync themselves", async () => {
    expect(walSyncOf(join(dir, "missing.db"))).toBeUndefined();
  });
});
