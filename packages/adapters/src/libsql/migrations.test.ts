import NativeDatabase from "libsql";
import { describe, expect, it } from "vitest";
import type { LibsqlConnection } from "./_source.js";
import { tempDatabase } from "../../../../test/_support/libsql-database.js";
import { libsqlStore, migrateLibsql } from "./index.js";
import { connectLibsql } from "./local/connect-libsql.js";

const versions = async (db: LibsqlConnection) =>
  (await db.execute("SELECT version FROM schema_migrations ORDER BY version")).map((row) => row.version);

describe("migrateLibsql", () => {
  it("records each version once and changes nothing when run again", async () => {
    const database = await tempDatabase();
    try {
      const store = libsqlStore(database.db);
      await store.createPet({ name: "Rex", categoryId: 1 });
      await migrateLibsql(database.db);
      await migrateLibsql(database.db);
      expect(await versions(database.db as LibsqlConnection)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
      expect(await store.listPets({ limit: 10 })).toEqual([{ id: 1, name: "Rex", categoryId: 1 }]);
    } finally {
      await database.close();
    }
  });

  it("only reads a database already up to date: it migrates while another connection holds the write lock", async () => {
    const database = await tempDatabase();
    const path = database.url.replace(/^file:/, "");
    // Another writer (a second server, sqlite3) in the middle of a transaction.
    const writer = new NativeDatabase(path);
    writer.exec("BEGIN IMMEDIATE");
    const client = await connectLibsql({ url: database.url, busyTimeoutMs: 50 });
    try {
      await migrateLibsql(client);
      expect(await versions(client)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    } finally {
      client.close();
      writer.exec("ROLLBACK");
      writer.close();
      await database.close();
    }
  });

  it("lets several connections migrate one new database at the same time", async () => {
    const database = await tempDatabase();
    try {
      // A second file in the same directory, not migrated yet.
      const url = database.url.replace(/petstore\.db$/, "fresh.db");
      const clients = await Promise.all(Array.from({ length: 4 }, () => connectLibsql({ url })));
      try {
        await Promise.all(clients.map((client) => migrateLibsql(client)));
        expect(await versions(clients[0]!)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
        const created = await libsqlStore(clients[1]!).createPet({ name: "Rex", categoryId: 1 });
        expect(created.id).toBe(1);
      } finally {
        for (const client of clients) client.close();
      }
    } finally {
      await database.close();
    }
  });
});
