import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinary } from "../e2e/_binary.js";
import { client, listAllPets } from "../e2e/_http.js";
import { binaryServe, cleanUp, cli, createKey, startServer, stopProcess, tempDir } from "../e2e/_processes.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

function sqlite3(path: string, sql: string): string {
  return execFileSync("sqlite3", [path, sql], { encoding: "utf8", timeout: 10_000 }).trim();
}

const python = (path: string) =>
  execFileSync(
    "python3",
    [
      "-c",
      "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(c.execute('select count(*) from pets').fetchone()[0]); c.close()",
      path,
    ],
    {
      encoding: "utf8",
      timeout: 10_000,
    },
  );

/**
 * What other programs do to a database a server holds: each opens the file and closes it
 * again, which makes it the last connection in SQLite's eyes unless the server's locks hold
 * (SQLite then checkpoints and deletes the WAL the server still writes to).
 */
const visitors: [string, (path: string, db: string) => Promise<unknown> | unknown][] = [
  ["the sqlite3 CLI reads it", (path) => sqlite3(path, "select count(*) from pets")],
  ["Python's sqlite3 reads it", (path) => python(path)],
  ["petstore keys list", async (_, db) => expect((await cli(["keys", "list", "--db", db])).code).toBe(0)],
  ["petstore keys create", (_, db) => createKey(db, ["--plan", "free"])],
  [
    "a second petstore serve starts and stops",
    async (_, db) => {
      const second = await startServer(binaryServe(db));
      expect(await stopProcess(second.child, "SIGTERM")).toEqual({ code: 0, signal: null });
    },
  ],
  ["an external PRAGMA wal_checkpoint(TRUNCATE)", (path) => sqlite3(path, "PRAGMA wal_checkpoint(TRUNCATE)")],
];

describe("another process opening the database of a running server", () => {
  it.each(visitors)(
    "loses no acknowledged pet when %s",
    async (_, visit) => {
      const path = join(tempDir(), "p.db");
      const db = `file:${path}`;
      const { key } = await createKey(db);
      const server = await startServer(binaryServe(db));
      const api = client(server.url, key);
      const acknowledged: number[] = [];
      const create = async (name: string) => {
        const response = await api("/v1/pets", { method: "POST", json: { name, categoryId: 1 } });
        expect(response.status).toBe(201);
        acknowledged.push(((await response.json()) as { id: number }).id);
      };

      for (const name of ["a1", "a2", "a3"]) await create(name);
      await visit(path, db);
      for (const name of ["a4", "a5", "a6"]) await create(name);
      expect(await stopProcess(server.child, "SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });

      const restarted = await startServer(binaryServe(db));
      const stored = (await listAllPets(client(restarted.url, key))).map((pet) => pet.id);
      expect(stored).toEqual(expect.arrayContaining(acknowledged));
      expect(await stopProcess(restarted.child, "SIGTERM")).toEqual({ code: 0, signal: null });
      expect(sqlite3(path, "PRAGMA integrity_check")).toBe("ok");
    },
    30_000,
  );
});
