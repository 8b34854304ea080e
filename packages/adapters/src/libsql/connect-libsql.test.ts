import { createServer, type Server, type Socket } from "node:net";
import { createPetstore, StorageUnavailableError } from "@petstore/core";
import { afterEach, describe, expect, it } from "vitest";
import { tempDatabase } from "./_temp-database.js";
import { connectLibsql, libsqlAdapters, libsqlKeys, libsqlStore, migrate } from "./index.js";

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

describe("connectLibsql", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("puts a file database in WAL mode with the busy timeout on every pooled connection", async () => {
    const database = await tempDatabase();
    cleanups.push(database.close);
    const client = await database.connect({ busyTimeoutMs: 1_234 });
    // Concurrent calls each borrow a connection of the pool, so this reads several of them.
    const timeouts = await Promise.all(Array.from({ length: 4 }, () => client.execute("PRAGMA busy_timeout")));
    expect(timeouts.map((result) => result.rows[0]![0])).toEqual([1_234, 1_234, 1_234, 1_234]);
    expect((await client.execute("PRAGMA journal_mode")).rows[0]![0]).toBe("wal");
  });

  it("opens an in-memory database", async () => {
    const client = await connectLibsql({ url: ":memory:" });
    cleanups.push(() => client.close());
    expect((await client.execute("SELECT 1 + 1 AS two")).rows[0]!.two).toBe(2);
  });

  it("opens an in-memory database that the client and the adapters share", async () => {
    const client = await connectLibsql({ url: ":memory:" });
    cleanups.push(() => client.close());
    await migrate(client);
    const store = libsqlStore({ client });
    await store.createPet({ name: "Rex", categoryId: 1 });
    expect((await client.execute("SELECT name FROM pets")).rows.map((row) => row.name)).toEqual(["Rex"]);
    await client.execute("INSERT INTO pets (name, category_id) VALUES ('Fido', 2)");
    expect((await store.listPets({ limit: 10 })).map((pet) => pet.name)).toEqual(["Rex", "Fido"]);
  });

  it("closes the adapters' own connection with the client: they then answer StorageUnavailableError", async () => {
    const database = await tempDatabase();
    cleanups.push(database.close);
    for (const url of [":memory:", database.url]) {
      const client = await connectLibsql({ url });
      await migrate(client);
      const store = libsqlStore({ client });
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
    await expect(libsqlKeys({ client }).list()).rejects.toBeInstanceOf(StorageUnavailableError);
  });

  it("answers 503 with Retry-After when the remote server never answers, within the busy timeout", async () => {
    const server = await silentServer();
    cleanups.push(server.close);
    const client = await connectLibsql({ url: `http://127.0.0.1:${server.port}`, busyTimeoutMs: 200 });
    cleanups.push(() => client.close());
    const petstore = createPetstore({ ...libsqlAdapters({ client }) });
    const started = performance.now();
    const response = await petstore.fetch(new Request("http://petstore.test/v1/pets"), { clientAddress: "203.0.113.7" });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(response.status).toBe(503);
    expect(response.headers.get("Retry-After")).toBe("1");
    expect(await response.json()).toMatchObject({ code: "service_unavailable" });
  });
});
