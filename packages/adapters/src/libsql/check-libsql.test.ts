import { StorageUnavailableError } from "@petstore/core";
import NativeDatabase from "libsql";
import { describe, expect, it } from "vitest";
import { libsqlConnection } from "./_source.js";
import { tempDatabase } from "../../../../test/_support/libsql-database.js";
import { checkLibsql } from "./index.js";
import { localEngine } from "./local/local-engine.js";

describe("checkLibsql", () => {
  it("writes its probe row stamped by the database's clock, answers that clock, and fails as storage unavailable when another connection holds the write lock", async () => {
    const database = await tempDatabase();
    try {
      const before = Date.now();
      const checkedAt = await checkLibsql(database.db);
      expect(checkedAt).toBeGreaterThanOrEqual(before);
      expect(checkedAt).toBeLessThanOrEqual(Date.now());
      expect((await database.query("SELECT checked_at FROM health_probe"))[0]!.checked_at).toBe(checkedAt);
      const blocked = await database.connect({ busyTimeoutMs: 20 });
      const other = new NativeDatabase(database.path);
      other.exec("BEGIN IMMEDIATE");
      try {
        await expect(checkLibsql(blocked)).rejects.toThrow(
          new StorageUnavailableError("the database is locked by another connection"),
        );
      } finally {
        other.exec("ROLLBACK");
        other.close();
      }
    } finally {
      await database.close();
    }
  });

  it("fails once the database's log cannot be fsynced, though the probe row commits", async () => {
    const database = await tempDatabase();
    const engine = localEngine(() => new NativeDatabase(database.path), {
      walSync: {
        sync: () => Promise.reject(Object.assign(new Error("EIO"), { code: "EIO" })),
        reopen: () => {},
        close: () => {},
      },
    });
    try {
      await expect(checkLibsql(libsqlConnection(engine, () => engine.close()))).rejects.toBeInstanceOf(
        StorageUnavailableError,
      );
    } finally {
      engine.close();
      await database.close();
    }
  });
});
