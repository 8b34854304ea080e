import { execFile } from "node:child_process";
import { chmod, copyFile, open } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { createPetstore, issueApiKey, type Petstore, StorageUnavailableError } from "@petstore/core";
import NativeDatabase from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDatabase } from "../../../../test/_support/libsql-database.js";
import { libsqlAdapters } from "./index.js";
import { connectLibsql } from "./local/connect-libsql.js";

const run = promisify(execFile);

function createPet(petstore: Petstore, key: string, name = "Rex"): Promise<Response> {
  return petstore.fetch(
    new Request("http://petstore.test/v1/pets", {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name, categoryId: 1 }),
    }),
    { clientAddress: "203.0.113.7" },
  );
}

async function expectUnavailable(response: Response): Promise<void> {
  expect(response.status).toBe(503);
  expect(response.headers.get("Retry-After")).toBe("1");
  const text = await response.text();
  expect(JSON.parse(text)).toMatchObject({ code: "service_unavailable", status: 503 });
  // No SQL, no driver error text: only the contract's message.
  expect(text).not.toMatch(/SQLITE|sql|database|locked|readonly/i);
}

async function canWrite(path: string): Promise<boolean> {
  try {
    await (await open(path, "r+")).close();
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes a file read-only for this process and returns how to undo it, or undefined when that
 * is impossible here. Permissions stop a normal user; root ignores them, so for root the file
 * is also made immutable (Linux `chattr +i`, which root needs CAP_LINUX_IMMUTABLE for).
 */
async function makeReadOnly(path: string): Promise<(() => Promise<void>) | undefined> {
  await chmod(path, 0o444);
  const restoreMode = () => chmod(path, 0o644);
  if (!(await canWrite(path))) return restoreMode;
  try {
    await run("chattr", ["+i", path]);
  } catch {
    await restoreMode();
    return undefined;
  }
  const restore = async () => {
    await run("chattr", ["-i", path]);
    await restoreMode();
  };
  if (!(await canWrite(path))) return restore;
  await restore();
  return undefined;
}

/** Another connection takes the write lock (BEGIN IMMEDIATE) until the returned function rolls back. */
function holdWriteLock(path: string): () => void {
  const other = new NativeDatabase(path);
  other.exec("BEGIN IMMEDIATE");
  return () => {
    other.exec("ROLLBACK");
    other.close();
  };
}

describe("libSQL adapters when storage fails", () => {
  let database: Awaited<ReturnType<typeof tempDatabase>>;
  let key: string;
  beforeEach(async () => {
    database = await tempDatabase();
    ({ key } = await issueApiKey(libsqlAdapters(database.db).keys, { plan: "pro" }));
  });
  afterEach(async () => {
    await database.close();
  });

  it("answers 503 with Retry-After while another connection holds the write lock, and serves again once it is released", async () => {
    const client = await database.connect({ busyTimeoutMs: 50 });
    const petstore = createPetstore({ ...libsqlAdapters(client) });
    const release = holdWriteLock(database.path);
    try {
      await expectUnavailable(await createPet(petstore, key, "Locked out"));
      await expectUnavailable(await createPet(petstore, key, "Locked out"));
    } finally {
      release();
    }
    const response = await createPet(petstore, key, "After the lock");
    expect(response.status).toBe(201);
    const pets = await libsqlAdapters(client).store.listPets({ limit: 10 });
    // Nothing the 503s answered was written.
    expect(pets.map((pet) => pet.name)).toEqual(["After the lock"]);
  });

  it("turns the lock error of the adapters' own connection into StorageUnavailableError", async () => {
    const client = await database.connect({ busyTimeoutMs: 20 });
    const release = holdWriteLock(database.path);
    try {
      const refused = libsqlAdapters(client).store.createPet({ name: "Locked out", categoryId: 1 });
      await expect(refused).rejects.toBeInstanceOf(StorageUnavailableError);
      // From the `libsql` package's own connection.
      await expect(refused).rejects.toMatchObject({ cause: expect.any(NativeDatabase.SqliteError) });
      await expect(refused).rejects.toMatchObject({ cause: { code: "SQLITE_BUSY" } });
    } finally {
      release();
    }
  });

  it("answers 503 with Retry-After on a read-only database file, and serves again once it is writable", async () => {
    // A copy that no connection of this process ever opened writable: SQLite reuses the file
    // descriptor of a closed connection to the same file, and libsql closes them lazily.
    await database.query("PRAGMA wal_checkpoint(TRUNCATE)");
    const path = join(database.dir, "read-only.db");
    await copyFile(database.path, path);
    const restore = await makeReadOnly(path);
    // Root ignores chmod, so makeReadOnly falls back to chattr +i; a machine where neither
    // works cannot run this test, and that must show as a failure, not a pass.
    if (!restore) throw new Error("cannot make a file read-only here (chmod as non-root, chattr +i as root)");
    let restored = false;
    const client = await connectLibsql({ url: `file:${path}`, busyTimeoutMs: 50 });
    try {
      const petstore = createPetstore({ ...libsqlAdapters(client) });
      const refused = libsqlAdapters(client).store.createPet({ name: "Read-only", categoryId: 1 });
      await expect(refused).rejects.toMatchObject({ cause: { code: expect.stringMatching(/^SQLITE_READONLY/) } });
      await expect(refused).rejects.toMatchObject({ cause: expect.any(NativeDatabase.SqliteError) });
      await expectUnavailable(await createPet(petstore, key, "Read-only"));
      await expectUnavailable(await createPet(petstore, key, "Read-only"));
      await restore();
      restored = true;
      const response = await createPet(petstore, key, "Writable again");
      expect(response.status).toBe(201);
      expect((await libsqlAdapters(client).store.listPets({ limit: 10 })).map((pet) => pet.name)).toEqual([
        "Writable again",
      ]);
    } finally {
      client.close();
      if (!restored) await restore();
    }
  });
});
