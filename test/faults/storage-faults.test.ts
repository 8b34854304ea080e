import { execFileSync, spawn } from "node:child_process";
import { existsSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ensureBinary } from "../e2e/_binary.js";
import { client, listAllPets } from "../e2e/_http.js";
import {
  binaryServe,
  cleanUp,
  cli,
  createKey,
  type Server,
  startServer,
  stopProcess,
  tempDir,
  waitFor,
} from "../e2e/_processes.js";

/**
 * Storage faults under a running binary: for each, no acknowledged write is lost, the API
 * answers 503 with Retry-After and the rate-limit headers while it lasts, `/healthz` says so,
 * and the server recovers by itself once the fault ends. Full disks and read-only file systems
 * are made with tmpfs mounts, which need root (as CI has).
 */
const isRoot = process.getuid?.() === 0;
if (!isRoot) console.warn("storage-faults.test: skipping the storage-fault suite: tmpfs mounts and chattr need root");
const RATE_LIMIT_HEADERS = [
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "ratelimit",
  "ratelimit-policy",
];
/** Requests wait this long for another process's write lock before their 503. */
const BUSY_TIMEOUT_MS = "300";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

const mounts: string[] = [];
afterEach(() => {
  for (const dir of mounts.splice(0)) execFileSync("umount", ["-l", dir]);
});

function mountTmpfs(size: string): string {
  const dir = tempDir();
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir]);
  mounts.push(dir);
  return dir;
}

/**
 * Runs `body` while a sqlite3 CLI process on `path` sits in the transaction `first` opened;
 * then sends `last` and waits for it to exit (killed in any case).
 */
async function inSqlite3Session(path: string, first: string, last: string, body: () => Promise<void>): Promise<void> {
  const child = spawn("sqlite3", [path], { stdio: ["pipe", "ignore", "ignore"] });
  try {
    child.stdin.write(first);
    await body();
    child.stdin.end(last);
    await new Promise((resolve) => child.once("exit", resolve));
  } finally {
    child.kill("SIGKILL");
  }
}

/** Resolves once another process holds the database's write lock (a BEGIN IMMEDIATE of ours fails at once); at most 10 s. */
async function writeLockTaken(path: string): Promise<void> {
  const weCanWrite = () => {
    try {
      execFileSync("sqlite3", [path, "BEGIN IMMEDIATE; ROLLBACK;"], { stdio: "pipe", timeout: 5_000 });
      return true;
    } catch {
      return false;
    }
  };
  await waitFor(() => !weCanWrite(), 10_000, { what: "the other process to take the write lock" });
}

const sqlite3 = (path: string, sql: string) =>
  execFileSync("sqlite3", [path, sql], { encoding: "utf8", timeout: 10_000 }).trim();

/** A server on `path` with a key, and what it acknowledged. */
async function serving(path: string) {
  const db = `file:${path}`;
  const { key } = await createKey(db);
  const env = { ...process.env, PETSTORE_DB_BUSY_TIMEOUT_MS: BUSY_TIMEOUT_MS };
  let server: Server = await startServer(binaryServe(db), { env });
  const acknowledged: number[] = [];
  let n = 0;
  const api = () => client(server.url, key);
  /** One create; a 201 is remembered, anything else returned for the test to judge. */
  async function create(): Promise<Response> {
    const response = await api()("/v1/pets", { method: "POST", json: { name: `p${n++}`, categoryId: 1 } });
    if (response.status === 201) acknowledged.push(((await response.clone().json()) as { id: number }).id);
    return response;
  }
  /** Creates until one is answered `status` (at most `tries` times). */
  async function createUntil(status: number, tries = 2_000): Promise<Response> {
    for (let i = 0; i < tries; i++) {
      const response = await create();
      if (response.status === status) return response;
      await response.body?.cancel();
    }
    throw new Error(`no ${status} in ${tries} creates`);
  }
  const healthz = () => fetch(new URL("/healthz", server.url));
  /** Polls /healthz (bounded) until it answers `status`; returns that answer's body. */
  async function healthUntil(status: number, ms = 10_000): Promise<{ status: string; reason?: string }> {
    let last = { status: 0, body: "" };
    const answers = async () => {
      const response = await healthz();
      last = { status: response.status, body: await response.text() };
      return last.status === status;
    };
    await waitFor(answers, ms, {
      every: 100,
      what: () => `/healthz to answer ${status}, still ${last.status}: ${last.body}`,
    });
    return JSON.parse(last.body) as { status: string; reason?: string };
  }
  /** SIGKILL, start again on the same file: every acknowledged pet must be there. */
  async function killAndCheck(): Promise<void> {
    expect(await stopProcess(server.child, "SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });
    server = await startServer(binaryServe(db), { env });
    const stored = new Set((await listAllPets(api())).map((pet) => pet.id));
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });
    expect(sqlite3(path, "PRAGMA integrity_check")).toBe("ok");
  }
  /** Once the fault has ended: 201s and a healthy /healthz again, by itself, and nothing lost. */
  async function recoversKeepingEverything(): Promise<void> {
    await createUntil(201, 50);
    expect(await healthUntil(200)).toEqual({ status: "ok" });
    await killAndCheck();
  }
  return { create, createUntil, healthUntil, killAndCheck, recoversKeepingEverything, acknowledged };
}

/** The contract's answer while storage fails: 503, Retry-After, the rate-limit headers. */
async function expectUnavailable(response: Response): Promise<void> {
  expect(response.status).toBe(503);
  expect(((await response.json()) as { code: string }).code).toBe("service_unavailable");
  expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  for (const name of RATE_LIMIT_HEADERS) expect(response.headers.get(name), name).not.toBeNull();
  // "0" when the limiter's own write failed (undecided); what it decided when only the create
  // failed (a count, acknowledged as nothing, is not checked against the file's identity).
  expect(response.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/);
}

describe.runIf(isRoot)("storage faults under a running binary (tmpfs mounts and chattr: root only)", () => {
  it("answers 503 on a full disk, says so in /healthz, and recovers once there is space", async () => {
    const dir = mountTmpfs("2m");
    const server = await serving(join(dir, "p.db"));
    await server.createUntil(201);
    // Fill what is left of the file system.
    const filler = join(dir, "filler");
    try {
      writeFileSync(filler, Buffer.alloc(4 * 1024 * 1024));
    } catch {
      // ENOSPC: the file keeps what fitted.
    }
    await expectUnavailable(await server.createUntil(503));
    expect((await server.healthUntil(503)).status).toBe("unavailable");
    rmSync(filler);
    await server.recoversKeepingEverything();
  }, 60_000);

  it("answers 503 while the database files are read-only, and recovers once they are writable again", async () => {
    const path = join(tempDir(), "p.db");
    // Immutable files refuse writes even through descriptors opened before (root only). Not
    // the -shm file, which SQLite maps into memory: a write to that page would be a SIGBUS.
    const files = [path, `${path}-wal`];
    const immutable = (flag: "+i" | "-i") => execFileSync("chattr", [flag, ...files]);
    const server = await serving(path);
    await server.createUntil(201);
    immutable("+i");
    try {
      await expectUnavailable(await server.create());
      expect((await server.healthUntil(503)).reason).toMatch(/read-only|could not be read or written/);
      // A server started now on that database refuses to, in one line.
      const refused = await cli(["serve", "--host", "127.0.0.1", "--port", "0", "--db", `file:${path}`]);
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim().split("\n")).toHaveLength(1);
      expect(refused.stderr).toMatch(/^petstore: cannot serve file:.*p\.db: the database is read-only/);
    } finally {
      immutable("-i");
    }
    await server.recoversKeepingEverything();
  }, 60_000);
});

describe("storage faults under a running binary", () => {
  it("answers no 201 while the database files are moved away, and serves again once they are back", async () => {
    const path = join(tempDir(), "p.db");
    const server = await serving(path);
    await server.createUntil(201);
    const files = [path, `${path}-wal`, `${path}-shm`];
    for (const file of files) renameSync(file, `${file}.away`);
    await expectUnavailable(await server.create());
    expect((await server.healthUntil(503)).reason).toMatch(/removed or replaced while open/);
    for (const file of files) renameSync(`${file}.away`, file);
    await server.recoversKeepingEverything();
  }, 60_000);

  it("answers no 201 once the database file is deleted or replaced", async () => {
    const dir = tempDir();
    const path = join(dir, "p.db");
    const server = await serving(path);
    await server.createUntil(201);
    rmSync(path);
    await expectUnavailable(await server.create());
    writeFileSync(path, "");
    await expectUnavailable(await server.create());
    expect((await server.healthUntil(503)).reason).toMatch(/removed or replaced while open/);
    expect(existsSync(`${path}-wal`)).toBe(true);
  }, 60_000);

  it("answers 503 while another process holds the write lock past the busy timeout, then serves again", async () => {
    const path = join(tempDir(), "p.db");
    const server = await serving(path);
    await server.createUntil(201);
    const lock =
      "BEGIN IMMEDIATE;\nINSERT INTO health_probe (id, checked_at) VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET checked_at = 0;\n";
    await inSqlite3Session(path, lock, "COMMIT;\n", async () => {
      await writeLockTaken(path);
      await expectUnavailable(await server.createUntil(503, 100));
      expect((await server.healthUntil(503)).reason).toMatch(/locked/);
    });
    await server.recoversKeepingEverything();
  }, 60_000);

  it("keeps answering 201 beside an external reader in a long transaction and an external checkpointer", async () => {
    const path = join(tempDir(), "p.db");
    const server = await serving(path);
    await server.createUntil(201);
    await inSqlite3Session(path, "BEGIN;\nSELECT count(*) FROM pets;\n", "COMMIT;\n", async () => {
      for (let i = 0; i < 20; i++) expect((await server.create()).status).toBe(201);
      sqlite3(path, "PRAGMA wal_checkpoint(TRUNCATE)");
      for (let i = 0; i < 20; i++) expect((await server.create()).status).toBe(201);
    });
    sqlite3(path, "PRAGMA wal_checkpoint(TRUNCATE)");
    for (let i = 0; i < 20; i++) expect((await server.create()).status).toBe(201);
    expect(server.acknowledged).toHaveLength(61);
    await server.killAndCheck();
  }, 60_000);
});
