import { StorageUnavailableError } from "@petstore/core";
import { describe, expect, it } from "vitest";
import { useWorkerdBindings } from "../../../../test/_support/workerd.js";
import { type D1Database, d1Keys, d1Store, migrateD1 } from "./index.js";

/** A binding whose every query fails with `message`, as D1 answers when it cannot serve. */
function failingD1(message: string): D1Database {
  const statement = { bind: () => statement, all: () => Promise.reject(new Error(message)) };
  return { prepare: () => statement, batch: () => Promise.reject(new Error(message)) };
}

describe("the D1 adapters", () => {
  const workerd = useWorkerdBindings(2);

  it("refuses a second key with the same hash as a duplicate, as the other adapters do", async () => {
    const keys = d1Keys(await workerd.database());
    const record = { id: "key_a", hash: "ab".repeat(32), plan: "free" as const, createdAt: 1 };
    await keys.insert(record);
    expect(await keys.insert({ ...record, id: "key_b" })).toEqual({ state: "duplicate" });
  });

  it("migrates a database twice without harm", async () => {
    const db = await workerd.database();
    await migrateD1(db);
    expect(await d1Store(db).listPets({ limit: 5 })).toEqual([]);
  });

  it.each(["D1 DB is overloaded. Too many requests queued.", "Network connection lost."])(
    "answers 503 (StorageUnavailableError) when D1 says %s",
    async (message) => {
      const error = await d1Store(failingD1(message))
        .getPet(1)
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(StorageUnavailableError);
      expect((error as Error).cause).toMatchObject({ message });
    },
  );

  it("throws a wrong statement's error with SQLite's code from its message, not as a 503", async () => {
    const error = await d1Store(failingD1("D1_ERROR: no such table: pets: SQLITE_ERROR"))
      .getPet(1)
      .catch((caught: unknown) => caught);
    expect(error).not.toBeInstanceOf(StorageUnavailableError);
    expect(error).toMatchObject({
      code: "SQLITE_ERROR",
      message: "the database has no table pets: run migrateD1 on it before the adapters use it",
    });
  });
});
