import { StorageUnavailableError } from "@petstore/core";
import { describe, expect, it } from "vitest";
import { tempDatabase } from "./_temp-database.js";
import { checkLibsql } from "./index.js";

describe("checkLibsql", () => {
  it("writes its probe row, and fails as storage unavailable when another connection holds the write lock", async () => {
    const database = await tempDatabase();
    try {
      await checkLibsql(database.client, 42);
      expect((await database.client.execute("SELECT checked_at FROM health_probe")).rows[0]!.checked_at).toBe(42);
      const other = await database.connect({ busyTimeoutMs: 1 });
      const blocked = await database.connect({ busyTimeoutMs: 20 });
      const lock = await other.transaction("write");
      try {
        await lock.execute("UPDATE health_probe SET checked_at = 0");
        await expect(checkLibsql(blocked)).rejects.toThrow(new StorageUnavailableError("the database is locked by another connection"));
      } finally {
        await lock.rollback();
        other.close();
        blocked.close();
      }
    } finally {
      await database.close();
    }
  });
});
