import { describe, expect, it } from "vitest";
import { tempDatabase } from "./_temp-database.js";
import { connectLibsql, libsqlStore, migrate } from "./index.js";

const versions = async (client: Awaited<ReturnType<typeof tempDatabase>>["client"]) =>
  (await client.execute("SELECT version FROM schema_migrations ORDER BY version")).rows.map((row) => row.version);

describe("migrate", () => {
  it("records each version once and changes nothing when run again", async () => {
    const database = await tempDatabase();
    try {
      const store = libsqlStore({ client: database.client });
      await store.createPet({ name: "Rex", categoryId: 1 });
      await migrate(database.client);
      await migrate(database.client);
      expect(await versions(database.client)).toEqual([1, 2, 3, 4]);
      expect(await store.listPets({ limit: 10 })).toEqual([{ id: 1, name: "Rex", categoryId: 1 }]);
    } finally {
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
        await Promise.all(clients.map((client) => migrate(client)));
        expect(await versions(clients[0]!)).toEqual([1, 2, 3, 4]);
        const created = await libsqlStore({ client: clients[1]! }).createPet({ name: "Rex", categoryId: 1 });
        expect(created.id).toBe(1);
      } finally {
        for (const client of clients) client.close();
      }
    } finally {
      await database.close();
    }
  });
});
