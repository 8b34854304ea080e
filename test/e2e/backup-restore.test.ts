import { execFileSync } from "node:child_process";
import { copyFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinary } from "./_binary.js";
import { client, listAllPets } from "./_http.js";
import { binaryServe, cleanUp, cli, createKey, startServer, stopProcess, tempDir, waitFor } from "./_processes.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

describe("petstore backup, then a restore as the README says", () => {
  it("keeps every pet acknowledged before the backup began, and the original loses nothing", async () => {
    const dir = tempDir();
    const db = join(dir, "live.db");
    const { key } = await createKey(`file:${db}`);
    const server = await startServer(binaryServe(`file:${db}`));
    const api = client(server.url, key);
    const acknowledged: { id: number; name: string; at: number }[] = [];
    let stop = false;

    // Four clients create pets back to back: the server writes all through the backup.
    const writers = Array.from({ length: 4 }, async (_, writer) => {
      for (let n = 0; !stop; n++) {
        const name = `w${writer}-${n}`;
        const response = await api("/v1/pets", { method: "POST", json: { name, categoryId: 1 } });
        if (response.status !== 201) throw new Error(`unexpected ${response.status}: ${await response.text()}`);
        acknowledged.push({ id: ((await response.json()) as { id: number }).id, name, at: performance.now() });
      }
    });
    await waitFor(() => acknowledged.length >= 200, 20_000);
    const backupBegan = performance.now();
    const backup = await cli(["backup", "--db", `file:${db}`, "--out", join(dir, "backup.db"), "--json"]);
    const ackedWhenDone = acknowledged.length;
    // The stream goes on after the backup: those pets must be in the original only.
    await waitFor(() => acknowledged.length >= ackedWhenDone + 100, 20_000);
    stop = true;
    await Promise.all(writers);

    expect(backup.stderr).toBe("");
    expect(backup.code).toBe(0);
    const summary = JSON.parse(backup.stdout) as { pets: number; keys: number; integrity: string };
    const before = acknowledged.filter((pet) => pet.at < backupBegan);
    expect(summary).toMatchObject({ keys: 1, integrity: "ok" });
    expect(summary.pets).toBeGreaterThanOrEqual(before.length);
    expect(summary.pets).toBeLessThan(acknowledged.length);

    // The original lost nothing.
    expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });
    const again = await startServer(binaryServe(`file:${db}`));
    const original = new Map((await listAllPets(client(again.url, key))).map((pet) => [pet.id, pet.name]));
    expect(acknowledged.filter((pet) => original.get(pet.id) !== pet.name)).toEqual([]);
    expect(await stopProcess(again.child, "SIGTERM")).toEqual({ code: 0, signal: null });

    // Restore: the server is stopped; replace the file, delete the stale -wal and -shm, start.
    copyFileSync(join(dir, "backup.db"), db);
    rmSync(`${db}-wal`, { force: true });
    rmSync(`${db}-shm`, { force: true });
    const restored = await startServer(binaryServe(`file:${db}`));
    const restoredApi = client(restored.url, key);
    const pets = await listAllPets(restoredApi);
    const byId = new Map(pets.map((pet) => [pet.id, pet.name]));
    expect(pets).toHaveLength(summary.pets);
    expect(before.filter((pet) => byId.get(pet.id) !== pet.name)).toEqual([]);
    const created = await restoredApi("/v1/pets", { method: "POST", json: { name: "after restore", categoryId: 1 } });
    expect(created.status).toBe(201);
    expect(((await created.json()) as { id: number }).id).toBeGreaterThan(Math.max(...byId.keys()));
    expect(await stopProcess(restored.child, "SIGTERM")).toEqual({ code: 0, signal: null });
    expect(execFileSync("sqlite3", [db, "PRAGMA integrity_check"], { encoding: "utf8" }).trim()).toBe("ok");
  }, 90_000);
});
