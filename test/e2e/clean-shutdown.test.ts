import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinary } from "./_binary.js";
import { client } from "./_http.js";
import { binaryServe, cleanUp, createKey, startServer, stopProcess, tempDatabaseUrl, tempDir } from "./_processes.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

describe("a clean shutdown", () => {
  it("leaves every acknowledged pet in the database file alone, the WAL checkpointed into it", async () => {
    const db = tempDatabaseUrl();
    const { key } = await createKey(db);
    const server = await startServer(binaryServe(db));
    const api = client(server.url, key);
    const acknowledged: number[] = [];
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          api("/v1/pets", { method: "POST", json: { name: `Pet ${round}-${i}`, categoryId: 1 } }),
        ),
      );
      for (const answer of answers) {
        expect(answer.status).toBe(201);
        acknowledged.push(((await answer.json()) as { id: number }).id);
      }
    }
    expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });

    // What an operator who copies only petstore.db after `systemctl stop` gets.
    const path = fileURLToPath(new URL(db.replace(/^file:/, "file://")));
    const copy = join(tempDir(), "petstore.db");
    copyFileSync(path, copy);
    expect(existsSync(`${copy}-wal`)).toBe(false);
    const ids = execFileSync("sqlite3", [copy, "SELECT id FROM pets ORDER BY id"], { encoding: "utf8" })
      .trim()
      .split("\n")
      .map(Number);
    expect(ids).toEqual(acknowledged.sort((a, b) => a - b));
  }, 60_000);
});
