import { createServer, type Server, type Socket } from "node:net";
import { createPetstore, StorageUnavailableError } from "@petstore/core";
import { afterEach, describe, expect, it } from "vitest";
import { tempDatabase } from "../../../../../test/_support/libsql-database.js";
import { libsqlAdapters, libsqlKeys, libsqlStore, migrateLibsql } from "../index.js";
import { connectLibsql, databaseLocation } from "./connect-libsql.js";

/** A TCP server on 127.0.0.1 that accepts connections and never answers. */
async function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The migrations a database file holds, read by a connection of its own. */
async function tempDatabaseRows(path: string) {
  const db = await connectLibsql({ url: `file:${path}` });
  try {
    return await db.execute("SELECT version FROM schema_migrations");
  } finally {
    db.close();
  }
}

describe("connectLibsql", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("puts a file database in WAL mode with the busy timeout", async () => {
    const database = await tempDatabase();
    cleanups.push(database.close);
    const db = await connectLibsql({ url: database.url, busyTimeoutMs: 1_234 });
    cleanups.push(() => db.close());
    expect((await db.execute("PRAGMA busy_timeout"))[0]!.timeout).toBe(1_234);
    expect((await db.execute("PRAGMA journal_mode"))[0]!.journal_mode).toBe("wal");
  });

  it("accepts the forms of a file: URL: relative, absolute, file:/// and escaped", async () => {
    const database = await tempDatabase();
    cleanups.push(database.close);
    const path = `${database.dir}/with space.db`;
    for (const url of [
      `file:${path}`,
      `file://${path.replaceAll(" ", "%20")}`,
      `file:${path.replaceAll(" ", "%20")}`,
    ]) {
      const db = await connectLibsql({ url });
      await migrateLibsql(db);
      db.close();
    }
    expect((await tempDatabaseRows(path)).length).toBeGreaterThan(0);
  });

  it("opens an in-memory database that its own statements and the adapters share", async () => {
    const db = await connectLibsql({ url: ":memory:" });
    cleanups.push(() => db.close());
    expect((await db.execute("SELECT 1 + 1 AS two"))[0]!.two).toBe(2);
    await migrateLibsql(db);
    const store = libsqlStore(db);
    await store.createPet({ name: "Rex", categoryId: 1 });
    expect((await db.execute("SELECT name FROM pets")).map((row) => row.name)).toEqual(["Rex"]);
    await db.execute("INSERT INTO pets (name, category_id) VALUES ('Fido', 2)");
    expect((await store.listPets({ limit: 10 })).map((pet) => pet.name)).toEqual(["Rex", "Fido"]);
  });

  it("closes what it opened: the adapters then answer StorageUnavailableError", async () => {
    const database = await tempDatabase();
    cleanups.push(database.close);
    for (const url of [":memory:", database.url]) {
      const client = await connectLibsql({ url });
      await migrateLibsql(client);
      const store = libsqlStore(client);
      await store.createPet({ name: "Rex", categoryId: 1 });
      client.close();
      await expect(store.listPets({ limit: 10 })).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(store.createPet({ name: "Late", categoryId: 1 })).rejects.toBeInstanceOf(StorageUnavailableError);
    }
  });

  it("throws StorageUnavailableError when the remote server refuses connections", async () => {
    const { port, close } = await silentServer();
    await close();
    const client = await connectLibsql({ url: `http://127.0.0.1:${port}`, authToken: "token" });
    cleanups.push(() => client.close());
    await expect(libsqlKeys(client).list()).rejects.toBeInstanceOf(StorageUnavailableError);
  });

  it("answers 503 with Retry-After when the remote server never answers, within the busy timeout", async () => {
    const server = await silentServer();
    cleanups.push(server.close);
    const client = await connectLibsql({ url: `http://127.0.0.1:${server.port}`, busyTimeoutMs: 200 });
    cleanups.push(() => client.close());
    const petstore = createPetstore({ ...libsqlAdapters(client) });
    // The server never answers: only the busy timeout can end the request (the test's own time limit bounds it).
    const response = await petstore.fetch(new Request("http://petstore.test/v1/pets"), {
      clientAddress: "203.0.113.7",
    });
    expect(response.status).toBe(503);
    expect(response.headers.get("Retry-After")).toBe("1");
    expect(await response.json()).toMatchObject({ code: "service_unavailable" });
  });
});

describe("databaseLocation", () => {
  it("reads memory, file and server URLs by the one rule connectLibsql opens them with", () => {
    expect(databaseLocation(":memory:")).toEqual({ kind: "memory" });
    expect(databaseLocation("file::memory:?cache=shared")).toEqual({ kind: "memory" });
    expect(databaseLocation("file:petstore.db?mode=rwc")).toEqual({ kind: "file", path: "petstore.db" });
    expect(databaseLocation("file:/var/lib/petstore/pet%20store.db")).toEqual({
      kind: "file",
      path: "/var/lib/petstore/pet store.db",
    });
    expect(databaseLocation("file:///abs.db")).toEqual({ kind: "file", path: "/abs.db" });
    expect(databaseLocation("file://localhost/abs.db")).toEqual({ kind: "file", path: "/abs.db" });
    expect(databaseLocation("libsql://db.example")).toEqual({ kind: "remote" });
    expect(() => databaseLocation("file://elsewhere/abs.db")).toThrow(/names no host/);
    expect(() => databaseLocation("file:")).toThrow(/needs a path/);
  });
});
