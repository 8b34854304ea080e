import { execFileSync, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BINARY, ensureBinary } from "./_binary.js";
import { client, listAllPets } from "./_http.js";
import { binaryServe, cleanUp, cli, createKey, startServer, stopProcess, tempDir, waitFor } from "./_processes.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

describe("petstore backup, then petstore restore", () => {
  // One database written by four clients through a backup; the steps stop, restore and restart it in order.
  let dir: string;
  let db: string;
  let key: string;
  let server: Awaited<ReturnType<typeof startServer>>;
  let restored: typeof server;
  const acknowledged: { id: number; name: string; at: number }[] = [];
  let backupBegan: number;
  let backup: Awaited<ReturnType<typeof cli>>;
  let summary: { pets: number; keys: number; integrity: string };
  const ackedBeforeBackup = () => acknowledged.filter((pet) => pet.at < backupBegan);

  beforeAll(async () => {
    dir = tempDir();
    db = join(dir, "live.db");
    ({ key } = await createKey(`file:${db}`));
    server = await startServer(binaryServe(`file:${db}`));
    const api = client(server.url, key);
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
    try {
      await waitFor(() => acknowledged.length >= 200, 20_000);
      backupBegan = performance.now();
      backup = await cli(["backup", "--db", `file:${db}`, "--out", join(dir, "backup.db"), "--json"]);
      const ackedWhenDone = acknowledged.length;
      // The stream goes on after the backup: those pets must be in the original only.
      await waitFor(() => acknowledged.length >= ackedWhenDone + 100, 20_000);
    } finally {
      stop = true;
      await Promise.all(writers);
    }
  }, 60_000);

  it("backs up a database being written, with its key, and checks the copy's integrity", () => {
    expect(backup.stderr).toBe("");
    expect(backup.code).toBe(0);
    summary = JSON.parse(backup.stdout) as typeof summary;
    expect(summary).toMatchObject({ keys: 1, integrity: "ok" });
  });

  it("holds every pet acknowledged before the backup began, not those written after it", () => {
    expect(summary.pets).toBeGreaterThanOrEqual(ackedBeforeBackup().length);
    expect(summary.pets).toBeLessThan(acknowledged.length);
  });

  it("leaves the original with every acknowledged pet", async () => {
    expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });
    const again = await startServer(binaryServe(`file:${db}`));
    const original = new Map((await listAllPets(client(again.url, key))).map((pet) => [pet.id, pet.name]));
    expect(acknowledged.filter((pet) => original.get(pet.id) !== pet.name)).toEqual([]);
    expect(await stopProcess(again.child, "SIGTERM")).toEqual({ code: 0, signal: null });
  });

  it("restores the stopped server's database from the backup, naming what it holds", async () => {
    // The command replaces the database and its -wal and -shm.
    const restore = await cli(["restore", "--from", join(dir, "backup.db"), "--db", `file:${db}`]);
    expect(restore).toMatchObject({ code: 0, stderr: "" });
    expect(restore.stdout).toContain(
      `Restored ${db} from ${join(dir, "backup.db")}: ${summary.pets} pets, 0 orders, 1 API key; integrity check ok.`,
    );
  });

  it("serves after the restore the backup's pets, among them every one acknowledged before it began", async () => {
    restored = await startServer(binaryServe(`file:${db}`));
    const pets = await listAllPets(client(restored.url, key));
    const byId = new Map(pets.map((pet) => [pet.id, pet.name]));
    expect(pets).toHaveLength(summary.pets);
    expect(ackedBeforeBackup().filter((pet) => byId.get(pet.id) !== pet.name)).toEqual([]);
  });

  it("never gives a new pet an id a client was given before the restore", async () => {
    const created = await client(restored.url, key)("/v1/pets", {
      method: "POST",
      json: { name: "after restore", categoryId: 1 },
    });
    expect(created.status).toBe(201);
    // Though the backup holds fewer pets.
    expect(((await created.json()) as { id: number }).id).toBeGreaterThan(
      Math.max(...acknowledged.map((pet) => pet.id)),
    );
  });

  it("stops cleanly after the restore, leaving a sound database file", async () => {
    expect(await stopProcess(restored.child, "SIGTERM")).toEqual({ code: 0, signal: null });
    expect(execFileSync("sqlite3", [db, "PRAGMA integrity_check"], { encoding: "utf8" }).trim()).toBe("ok");
  });
});

/** The pets of a database file as sqlite3 sees it, or the error sqlite3 printed. */
function petCount(db: string): number | string {
  try {
    return Number(
      execFileSync("sqlite3", [db, "SELECT count(*) FROM pets"], { encoding: "utf8", stdio: "pipe" }).trim(),
    );
  } catch (error) {
    return String((error as { stderr?: string }).stderr ?? error);
  }
}

/** A database with `pets` pets (and a WAL still holding some: the server is killed, not stopped) and a backup of it made after `backedUp` of them. */
async function databaseWithBackup(
  pets: number,
  backedUp: number,
): Promise<{ dir: string; db: string; backup: string; key: string; ids: number[] }> {
  const dir = tempDir();
  const db = join(dir, "live.db");
  const backup = join(dir, "backup.db");
  const { key } = await createKey(`file:${db}`);
  const server = await startServer(binaryServe(`file:${db}`));
  const api = client(server.url, key);
  const ids: number[] = [];
  for (let n = 0; n < pets; n++) {
    if (n === backedUp) expect((await cli(["backup", "--db", `file:${db}`, "--out", backup])).code).toBe(0);
    const response = await api("/v1/pets", { method: "POST", json: { name: `p${n}`, categoryId: 1 } });
    expect(response.status).toBe(201);
    ids.push(((await response.json()) as { id: number }).id);
  }
  await stopProcess(server.child, "SIGKILL");
  return { dir, db, backup, key, ids };
}

describe("petstore restore, used carelessly", () => {
  it("refuses while a server has the database open, which keeps serving everything", async () => {
    const { db, backup, key } = await databaseWithBackup(30, 10);
    const server = await startServer(binaryServe(`file:${db}`));
    const refused = await cli(["restore", "--from", backup, "--db", `file:${db}`]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `petstore: another process has ${db} open (a running petstore serve, or sqlite3): stop it, then restore\n`,
    );
    expect(await listAllPets(client(server.url, key))).toHaveLength(30);
    const created = await client(server.url, key)("/v1/pets", {
      method: "POST",
      json: { name: "still here", categoryId: 1 },
    });
    expect(created.status).toBe(201);
    expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });
    expect(petCount(db)).toBe(31);
  }, 60_000);

  it("replaces a database whose WAL still holds commits, and the next start is sound", async () => {
    const { db, backup, key, ids } = await databaseWithBackup(30, 10);
    const restore = await cli(["restore", "--from", backup, "--db", `file:${db}`, "--json"]);
    expect(restore.code).toBe(0);
    expect(JSON.parse(restore.stdout)).toMatchObject({ pets: 10, idsContinue: true });
    const server = await startServer(binaryServe(`file:${db}`));
    const api = client(server.url, key);
    expect((await listAllPets(api)).map((pet) => pet.id)).toEqual(ids.slice(0, 10));
    const created = await api("/v1/pets", { method: "POST", json: { name: "after", categoryId: 1 } });
    expect(((await created.json()) as { id: number }).id).toBeGreaterThan(Math.max(...ids));
    expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });
    expect(execFileSync("sqlite3", [db, "PRAGMA integrity_check"], { encoding: "utf8" }).trim()).toBe("ok");
  }, 60_000);

  it("refuses a backup that is no Pet Store database, touching nothing", async () => {
    const { dir, db } = await databaseWithBackup(5, 1);
    const other = join(dir, "other.db");
    execFileSync("sqlite3", [other, "CREATE TABLE t (x)"]);
    const refused = await cli(["restore", "--from", other, "--db", `file:${db}`]);
    expect(refused).toMatchObject({
      code: 1,
      stderr: `petstore: ${other} is not a Pet Store database (it has no pets, orders and api_keys tables)\n`,
    });
    expect(petCount(db)).toBe(5);
  }, 60_000);

  it("killed at any point, leaves the old database or the new one, never a mix", async () => {
    const { dir, db, backup } = await databaseWithBackup(40, 15);
    // How long a whole restore takes here, so that the kills fall all through one.
    const spare = join(dir, "spare.db");
    execFileSync("sqlite3", [db, `VACUUM INTO '${spare}'`]);
    const started = performance.now();
    expect((await cli(["restore", "--from", backup, "--db", `file:${spare}`])).code).toBe(0);
    const took = performance.now() - started;
    const outcomes = new Set<number | string>();
    for (let round = 0; round < 12; round++) {
      const child = spawn(BINARY, ["restore", "--from", backup, "--db", `file:${db}`], { stdio: "ignore" });
      await new Promise((resolve) => setTimeout(resolve, (took * round) / 12));
      await stopProcess(child, "SIGKILL");
      const pets = petCount(db);
      // 40: the old database (its WAL checkpointed or not); 15: the backup.
      expect([40, 15]).toContain(pets);
      expect(execFileSync("sqlite3", [db, "PRAGMA integrity_check"], { encoding: "utf8" }).trim()).toBe("ok");
      outcomes.add(pets);
      if (pets === 15) break;
    }
    // Whatever was left, a restore run to the end completes it.
    expect((await cli(["restore", "--from", backup, "--db", `file:${db}`])).code).toBe(0);
    expect(petCount(db)).toBe(15);
    expect(readdirSync(dir).filter((name) => name.endsWith(".restoring"))).toEqual([]);
  }, 90_000);
});
