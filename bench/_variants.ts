/**
 * The servers under test. Each starts on a given loopback port, pinned to core 0, holds the
 * 20 seed pets and one key whose limits the run cannot exhaust, and is checked to answer
 * GET /v1/pets with exactly those pets before anything is measured.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { generateApiKey } from "@petstore/core";
import { BINARY } from "../test/e2e/_binary.js";
import { beforeBinary } from "./_before.js";
import { freshDatabase, sharedRedis } from "./_engines.js";
import { pinned, type Started, start, stop, waitUntilServing } from "./_processes.js";
import { SEED_PETS } from "./_seed.js";

const ROOT = join(import.meta.dirname, "..");
const BUN = join(ROOT, "node_modules/.bin/bun");
const DENO = join(ROOT, "node_modules/.bin/deno");
const SERVER_CORE = 0;
/** Far above what a run can send: no measured request may be refused. */
export const UNLIMITED = "1000000000";

/** What every variant serves at GET /v1/pets once seeded. */
const EXPECTED_PETS = SEED_PETS.map((pet, i) => ({ id: i + 1, ...pet }));

export interface RunningVariant {
  started: Started;
  /** http://127.0.0.1:PORT */
  url: string;
  /** Sent as the bearer key; the baseline checks none. */
  key: string;
  /** This project's servers: the file their stdout (the access log) is appended to. */
  logFile?: string;
  /** Stops the server and removes what it left behind. */
  close(): Promise<void>;
}

export interface Variant {
  name: string;
  /** This project's server: any answer other than 2xx or an intended 429 is a defect. */
  ours: boolean;
  /**
   * Where it keeps pets and counters. After a POST run only the `memory` ones are brought to
   * the same number of pets for the RSS =pets column (a durable SQLite peer takes minutes to
   * create a 3 s run's pets).
   */
  storage: "none" | "memory" | "file" | "postgres";
  start(port: number): Promise<RunningVariant>;
}

/** The environment without any PETSTORE_ setting of the caller's, plus `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("PETSTORE_")));
  return { ...env, NO_COLOR: "1", ...extra };
}

const newKey = () => generateApiKey();

/** `petstore keys create` on `db` (by `binary`): an enterprise key with limits the run cannot reach. */
export function createKey(db: string, binary = BINARY): Promise<string> {
  const args = [
    "keys",
    "create",
    "--plan",
    "enterprise",
    "--per-minute",
    UNLIMITED,
    "--per-day",
    UNLIMITED,
    "--label",
    "bench",
    "--json",
    "--db",
    db,
  ];
  return new Promise((resolve, reject) => {
    execFile(binary, args, { env: cleanEnv(), timeout: 20_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`petstore keys create failed: ${stderr}`));
      else resolve((JSON.parse(stdout) as { key: string }).key);
    });
  });
}

/** POSTs the seed pets (when `seed`), then checks GET /v1/pets answers exactly them. */
export async function seedAndCheck(url: string, key: string, seed: boolean): Promise<void> {
  const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
  if (seed) {
    for (const pet of SEED_PETS) {
      const response = await fetch(`${url}/v1/pets`, {
        method: "POST",
        headers,
        body: JSON.stringify(pet),
        signal: AbortSignal.timeout(5_000),
      });
      if (response.status !== 201)
        throw new Error(`seeding ${url}: POST /v1/pets answered ${response.status}: ${await response.text()}`);
    }
  }
  const response = await fetch(`${url}/v1/pets`, { headers, signal: AbortSignal.timeout(5_000) });
  const pets: unknown = await response.json();
  if (response.status !== 200 || !isDeepStrictEqual(pets, EXPECTED_PETS)) {
    throw new Error(
      `${url}/v1/pets does not answer 200 with the 20 seed pets: ${response.status} ${JSON.stringify(pets).slice(0, 300)}`,
    );
  }
}

/** Starts `command`, waits for a 200 from `readyPath`, seeds it; stops it again if any of that fails. */
async function launch(
  command: string[],
  options: {
    port: number;
    env: NodeJS.ProcessEnv;
    cwd?: string;
    key: string;
    readyPath: string;
    seed: boolean;
    dir?: string;
    logFile?: string;
  },
): Promise<RunningVariant> {
  const url = `http://127.0.0.1:${options.port}`;
  const removeDir = () => {
    if (options.dir !== undefined) rmSync(options.dir, { recursive: true, force: true });
  };
  let started: Started | undefined;
  try {
    started = start(pinned(SERVER_CORE, command), {
      env: options.env,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.logFile === undefined ? {} : { stdout: options.logFile }),
    });
    await waitUntilServing(started, url + options.readyPath, { headers: { Authorization: `Bearer ${options.key}` } });
    await seedAndCheck(url, options.key, options.seed);
  } catch (error) {
    if (started) await stop(started);
    removeDir();
    throw error;
  }
  const running = started;
  return {
    started: running,
    url,
    key: options.key,
    ...(options.logFile === undefined ? {} : { logFile: options.logFile }),
    close: async () => {
      await stop(running);
      removeDir();
    },
  };
}

/**
 * One of this project's servers, in `dir` (removed by `close`): ready when `/healthz` answers,
 * seeded, its stdout (the access log) appended to a file there.
 */
function launchServer(
  command: string[],
  options: { port: number; env: NodeJS.ProcessEnv; cwd: string; key: string; dir: string },
): Promise<RunningVariant> {
  return launch(command, { ...options, readyPath: "/healthz", seed: true, logFile: join(options.dir, ACCESS_LOG) });
}

/** A new temporary directory handed to `serveOn`; removed if that fails (else by `close`). */
async function inTemporaryDirectory(serveOn: (dir: string) => Promise<RunningVariant>): Promise<RunningVariant> {
  const dir = mkdtempSync(join(tmpdir(), "petstore-bench-"));
  try {
    return await serveOn(dir);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** A new file database in a temporary directory, with a key made by `binary`'s CLI, handed to `serveOn`. */
function onFileDatabase(
  serveOn: (db: string, key: string, dir: string) => Promise<RunningVariant>,
  binary = BINARY,
): Promise<RunningVariant> {
  return inTemporaryDirectory(async (dir) => {
    const db = `file:${join(dir, "petstore.db")}`;
    return serveOn(db, await createKey(db, binary), dir);
  });
}
const serveArgs = (port: number, db: string) => ["serve", "--host", "127.0.0.1", "--port", String(port), "--db", db];

/**
 * The documented Deno command line (root package.json "start:deno"), moved to `port` and `db`;
 * `allowEnv` adds variables to its `--allow-env` (the bootstrap key of a `:memory:` server).
 */
function denoCommand(port: number, db: string, allowEnv: string[] = []): string[] {
  const script = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> })
    .scripts["start:deno"];
  const [deno, ...args] = script?.split(" ") ?? [];
  if (deno !== "deno" || !args.some((arg) => arg.startsWith("--allow-net="))) {
    throw new Error(
      `package.json "start:deno" is not the 'deno run ... --allow-net=...' command this benchmark expects: ${script}`,
    );
  }
  const moved = args.map((arg) => {
    if (arg.startsWith("--allow-net=")) return `--allow-net=127.0.0.1:${port}`;
    return arg.startsWith("--allow-env=") && allowEnv.length > 0 ? [arg, ...allowEnv].join(",") : arg;
  });
  return [DENO, ...moved, "--host", "127.0.0.1", "--port", String(port), "--db", db];
}

/** The environment every framework peer (bench/_peer.ts) reads: its port, the key and its limits. */
const PEER_ENV = [
  "BENCH_PORT",
  "BENCH_KEY",
  "BENCH_PER_MINUTE",
  "BENCH_PER_DAY",
  "BENCH_DB",
  "BENCH_SYNCHRONOUS",
  "BENCH_ACCESS_LOG",
];

/**
 * A framework peer (bench/_peer.ts) under Bun (`bun <script>`) or Deno (`deno run` with only
 * the permissions it needs), the key and its limits in the environment; with `sqlite`, its
 * counters and pets in a new SQLite file (bench/_peer-sqlite.ts) synced NORMAL or FULL; with
 * `accessLog`, its JSON access log on stdout appended to a file, as this project's servers'.
 */
function peer(
  name: string,
  script: string,
  options: { runtime?: "bun" | "deno"; sqlite?: "NORMAL" | "FULL"; accessLog?: boolean } = {},
): Variant {
  const { runtime = "bun", sqlite, accessLog = false } = options;
  return {
    name,
    ours: false,
    storage: sqlite ? "file" : "memory",
    start: (port) =>
      inTemporaryDirectory((dir) => {
        const key = newKey();
        const file = sqlite && { BENCH_DB: join(dir, "peer.db"), BENCH_SYNCHRONOUS: sqlite };
        const env = cleanEnv({
          BENCH_PORT: String(port),
          BENCH_KEY: key,
          BENCH_PER_MINUTE: UNLIMITED,
          BENCH_PER_DAY: UNLIMITED,
          ...file,
          ...(accessLog && { BENCH_ACCESS_LOG: "1" }),
        });
        const command =
          runtime === "bun"
            ? [BUN, join(ROOT, script)]
            : [
                DENO,
                "run",
                "--sloppy-imports",
                "--node-modules-dir=manual",
                `--allow-env=${PEER_ENV.join(",")}`,
                `--allow-net=127.0.0.1:${port}`,
                `--allow-read=${dir}`,
                `--allow-write=${dir}`,
                join(ROOT, script),
              ];
        return launch(command, {
          port,
          env,
          cwd: ROOT,
          key,
          readyPath: "/v1/pets",
          seed: true,
          dir,
          ...(accessLog && { logFile: join(dir, ACCESS_LOG) }),
        });
      }),
  };
}

/**
 * The hand-built peer of the binary on PostgreSQL (bench/hono-postgres-peer.ts): a fresh
 * database, and the limits in Redis (`redis`) or in that database.
 */
function postgresPeer(name: string, limits: "postgres" | "redis"): Variant {
  return {
    name,
    ours: false,
    storage: "postgres",
    start: async (port) => {
      const key = newKey();
      const engines = {
        BENCH_DATABASE_URL: await freshDatabase(),
        ...(limits === "redis" && { BENCH_REDIS_URL: await sharedRedis() }),
      };
      const env = cleanEnv({
        BENCH_PORT: String(port),
        BENCH_KEY: key,
        BENCH_PER_MINUTE: UNLIMITED,
        BENCH_PER_DAY: UNLIMITED,
        ...engines,
      });
      return launch([BUN, join(ROOT, "bench/hono-postgres-peer.ts")], {
        port,
        env,
        key,
        readyPath: "/v1/pets",
        seed: true,
      });
    },
  };
}

/** The binary on a fresh PostgreSQL database, the limits in it or (`redis`) in the run's Redis. */
function binaryOnPostgres(name: string, limits: "postgres" | "redis"): Variant {
  return {
    name,
    ours: true,
    storage: "postgres",
    start: (port) =>
      inTemporaryDirectory(async (dir) => {
        const db = await freshDatabase();
        const key = await createKey(db);
        const limiter = limits === "redis" ? ["--limiter", await sharedRedis()] : [];
        return launchServer([BINARY, ...serveArgs(port, db), ...limiter], {
          port,
          env: cleanEnv(),
          cwd: dir,
          key,
          dir,
        });
      }),
  };
}

/** A `:memory:` server's environment: `key` given at start with limits the run cannot reach. */
const bootstrapEnv = (key: string) =>
  cleanEnv({
    PETSTORE_BOOTSTRAP_KEY: key,
    PETSTORE_BOOTSTRAP_PER_MINUTE: UNLIMITED,
    PETSTORE_BOOTSTRAP_PER_DAY: UNLIMITED,
  });

/** Where this project's servers' stdout goes, in their temporary directory. */
const ACCESS_LOG = "stdout.log";

/**
 * How many pets `server` holds: the id of one more pet it is asked to create (every variant
 * numbers pets 1, 2, 3...; the baseline stores none and only counts).
 */
export async function petsStored(server: RunningVariant): Promise<number> {
  const response = await fetch(`${server.url}/v1/pets`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.key}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "Count", categoryId: 1 }),
    signal: AbortSignal.timeout(10_000),
  });
  const { id } = (await response.json()) as { id: number };
  if (response.status !== 201 || !Number.isInteger(id))
    throw new Error(`${server.url}: POST /v1/pets answered ${response.status}, id ${id}`);
  return id;
}

/**
 * The compiled binary `petstore serve --db :memory:`, its key given at start. `binary` is asked
 * for its path when the variant starts (the "before" one is compiled then, once per commit).
 */
function binaryInMemory(name: string, binary: () => string): Variant {
  return {
    name,
    ours: true,
    storage: "memory",
    start: (port) =>
      inTemporaryDirectory((dir) => {
        const key = newKey();
        return launchServer([binary(), ...serveArgs(port, ":memory:")], {
          port,
          env: bootstrapEnv(key),
          cwd: dir,
          key,
          dir,
        });
      }),
  };
}

/** The compiled binary on a new file database, its key made by its own CLI; limits counted in the database. */
function binaryOnFile(name: string, binary: () => string): Variant {
  return {
    name,
    ours: true,
    storage: "file",
    start: (port) => {
      const path = binary();
      return onFileDatabase(
        (db, key, dir) => launchServer([path, ...serveArgs(port, db)], { port, env: cleanEnv(), cwd: dir, key, dir }),
        path,
      );
    },
  };
}

/** Every variant, in the order a round measures them; `baseline` first. */
export const VARIANTS: readonly Variant[] = [
  {
    name: "baseline",
    ours: false,
    storage: "none",
    start: (port) => {
      const env = { ...cleanEnv(), BENCH_PORT: String(port) };
      return launch([BUN, join(ROOT, "bench/baseline.ts")], {
        port,
        env,
        key: newKey(),
        readyPath: "/v1/pets",
        seed: false,
      });
    },
  },
  peer("hono", "bench/hono-peer.ts"),
  peer("elysia", "bench/elysia-peer.ts"),
  peer("elysia-log", "bench/elysia-peer.ts", { accessLog: true }),
  peer("elysia-sqlite", "bench/elysia-peer.ts", { sqlite: "NORMAL" }),
  peer("elysia-sqlite-full", "bench/elysia-peer.ts", { sqlite: "FULL" }),
  binaryInMemory("binary-memory", () => BINARY),
  binaryOnFile("binary-file", () => BINARY),
  binaryInMemory("binary-memory-before", beforeBinary),
  binaryOnFile("binary-file-before", beforeBinary),
  {
    name: "binary-deno",
    ours: true,
    storage: "file",
    start: (port) =>
      onFileDatabase((db, key, dir) =>
        launchServer(denoCommand(port, db), { port, env: cleanEnv(), cwd: ROOT, key, dir }),
      ),
  },
  {
    name: "binary-deno-memory",
    ours: true,
    storage: "memory",
    start: (port) =>
      inTemporaryDirectory((dir) => {
        const key = newKey();
        const command = denoCommand(
          port,
          ":memory:",
          Object.keys(bootstrapEnv(key)).filter((name) => name.startsWith("PETSTORE_")),
        );
        return launchServer(command, { port, env: bootstrapEnv(key), cwd: ROOT, key, dir });
      }),
  },
  peer("hono-deno", "bench/hono-deno-peer.ts", { runtime: "deno" }),
  peer("hono-deno-file", "bench/hono-deno-peer.ts", { runtime: "deno", sqlite: "FULL" }),
  binaryOnPostgres("binary-postgres", "postgres"),
  postgresPeer("hono-rlf-postgres", "postgres"),
  binaryOnPostgres("binary-postgres-redis", "redis"),
  postgresPeer("hono-rlf-redis", "redis"),
];
