import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./free-port.js";
import { waitFor } from "./wait-for.js";

/** Debian's PostgreSQL server binaries (installed by scripts/test-tools.sh): the newest major version there. */
export const POSTGRES_BIN = process.env.PETSTORE_POSTGRES_BIN ?? newestPostgresBin();

function newestPostgresBin(): string {
  const majors = existsSync("/usr/lib/postgresql")
    ? readdirSync("/usr/lib/postgresql").filter((name) => /^\d+$/.test(name))
    : [];
  const newest = majors
    .sort((a, b) => Number(b) - Number(a))
    .find((major) => existsSync(`/usr/lib/postgresql/${major}/bin/postgres`));
  return `/usr/lib/postgresql/${newest ?? "15"}/bin`;
}
/** The server refuses to run as root: it runs as this unprivileged user (`setpriv` execs, so the PID is the server's). */
const USER = "postgres";

/**
 * A running PostgreSQL server of the tests, on 127.0.0.1: `trust` authentication for the
 * superuser `postgres`, passwords (SCRAM) for every other role a test makes.
 */
export interface PostgresServer {
  readonly port: number;
  readonly dir: string;
  /** A connection URL for `database` (default `postgres`). */
  url(database?: string): string;
  /** Creates a fresh, empty database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** The server's PID (of `postgres` itself). */
  readonly pid: number | undefined;
  /** Starts the server again on the same port and directory after `stop`/`restart` (fast shutdown). */
  start(): Promise<void>;
  /** Fast shutdown (SIGINT): open transactions roll back, committed ones stay; resolves when the process exited. */
  stop(): Promise<void>;
  /** Sends `signal` to the server and each of its processes (backends, writers), by PID: SIGSTOP hangs it, SIGCONT resumes it. */
  signal(signal: NodeJS.Signals): void;
  /** Stops (fast shutdown) and removes the data directory. */
  destroy(): Promise<void>;
  /** Kills the server and each of its processes (SIGKILL, by PID), as a machine that died; resolves when the server is gone. */
  crash(): Promise<void>;
  /** A standby: ends recovery (`pg_ctl promote`) and resolves once it takes writes. */
  promote(): Promise<void>;
}

/** How a test's server differs from the default one. */
export interface PostgresOptions {
  /** Server settings (`-c name=value`) on top of the defaults, e.g. `max_connections`. */
  settings?: Readonly<Record<string, string>>;
  /** A streaming standby of this server: its data from `pg_basebackup -R` instead of `initdb`. */
  standbyOf?: PostgresServer;
  /** Environment of the server on top of this process's (libfaketime's, to step its clock). */
  env?: Readonly<Record<string, string>>;
}

/** Servers still running: killed (by PID) if the test process exits without stopping them. */
const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** Runs `argv` as the `postgres` user, synchronously, throwing with its output on failure. */
function asPostgres(argv: string[]): string {
  return execFileSync("setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", ...argv], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Resolves once `child` exited (at once if it already has). */
function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/**
 * Starts a throwaway PostgreSQL server: `initdb` in a new temporary directory owned by the
 * `postgres` user, then `postgres` on a free loopback port (a retry on a port taken meanwhile),
 * no Unix socket, fsync on, and `settings` as `-c name=value`. Bounded: a server that is not ready within 30 s is killed and
 * the call fails.
 */
export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresServer> {
  if (!existsSync(join(POSTGRES_BIN, "postgres")))
    throw new Error(`PostgreSQL not found in ${POSTGRES_BIN}: run scripts/test-tools.sh`);
  const dir = mkdtempSync(join(tmpdir(), "petstore-pg-"));
  const data = join(dir, "data");
  chownSync(dir, Number(asPostgresId("-u")), Number(asPostgresId("-g")));
  if (options.standbyOf === undefined) {
    asPostgres([
      join(POSTGRES_BIN, "initdb"),
      "-D",
      data,
      "-U",
      USER,
      "--auth=trust",
      "--encoding=UTF8",
      "--locale=C",
      "--no-sync",
    ]);
    const hba = join(data, "pg_hba.conf");
    // The superuser may also stream the WAL: standbys of this server connect as it.
    writeFileSync(
      hba,
      `host all ${USER} 127.0.0.1/32 trust\nhost replication ${USER} 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n`,
    );
    chownSync(hba, Number(asPostgresId("-u")), Number(asPostgresId("-g")));
  } else {
    // A copy of the primary that streams from it (-R writes primary_conninfo and standby.signal).
    asPostgres([
      join(POSTGRES_BIN, "pg_basebackup"),
      "-D",
      data,
      "-h",
      "127.0.0.1",
      "-p",
      String(options.standbyOf.port),
      "-U",
      USER,
      "-R",
      "-X",
      "stream",
      "--checkpoint=fast",
      "--no-sync",
    ]);
  }
  const settings = Object.entries(options.settings ?? {}).flatMap(([name, value]) => ["-c", `${name}=${value}`]);
  let child: ChildProcess | undefined;
  let port = 0;
  let output = "";

  async function launch(): Promise<boolean> {
    output = "";
    const spawned = spawn(
      "setpriv",
      [
        "--reuid=postgres",
        "--regid=postgres",
        "--init-groups",
        // Set by env, which runs as postgres: libfaketime in setpriv would make its semaphore
        // as root, which the server, the same process once setpriv execs it, may not open.
        ...(options.env ? ["env", ...Object.entries(options.env).map(([name, value]) => `${name}=${value}`)] : []),
        join(POSTGRES_BIN, "postgres"),
        "-D",
        data,
        "-p",
        String(port),
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "unix_socket_directories=",
        "-c",
        "max_connections=200",
        "-c",
        "shared_buffers=32MB",
        "-c",
        "log_min_messages=warning",
        // A test's own settings (max_connections=15, ssl=off...) after the defaults, so they win.
        ...settings,
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    child = spawned;
    running.add(spawned);
    spawned.once("exit", () => running.delete(spawned));
    spawned.stderr!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const accepts = () => {
      try {
        execFileSync(join(POSTGRES_BIN, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port), "-U", USER, "-t", "1"], {
          stdio: "ignore",
        });
        return true;
      } catch {
        return false;
      }
    };
    try {
      await waitFor(() => spawned.exitCode !== null || accepts(), 30_000, {
        every: 100,
        what: () => `postgres to become ready: ${output.trim()}`,
      });
    } catch (error) {
      spawned.kill("SIGKILL");
      await exited(spawned);
      throw error;
    }
    return spawned.exitCode === null;
  }

  async function start(keepPort: boolean): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      if (!keepPort || port === 0) port = await freePort();
      if (await launch()) return;
      // Another process took the port between freePort and the bind: try another one.
      if (!keepPort && /could not bind|Address already in use/i.test(output)) continue;
      throw new Error(`postgres exited at start: ${output.trim()}`);
    }
    throw new Error(`postgres found no free port: ${output.trim()}`);
  }

  async function stop(): Promise<void> {
    const running = child;
    if (running === undefined) return;
    child = undefined;
    if (running.exitCode === null && running.signalCode === null) running.kill("SIGINT");
    await exited(running);
  }

  await start(false);
  const url = (database = "postgres") => `postgres://${USER}@127.0.0.1:${port}/${database}`;
  return {
    get port() {
      return port;
    },
    dir,
    url,
    get pid() {
      return child?.pid;
    },
    async createDatabase(name) {
      asPostgres([join(POSTGRES_BIN, "createdb"), "-h", "127.0.0.1", "-p", String(port), "-U", USER, name]);
      return url(name);
    },
    start: () => start(true),
    stop,
    signal(signal) {
      const pid = child?.pid;
      if (pid === undefined) throw new Error("postgres is not running");
      for (const each of [pid, ...childrenOf(pid)]) {
        try {
          process.kill(each, signal);
        } catch (error) {
          // A backend that exited between the listing and the signal (its client went away).
          if ((error as { code?: unknown }).code !== "ESRCH" || each === pid) throw error;
        }
      }
    },
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    async crash() {
      const running = child;
      if (running === undefined) return;
      child = undefined;
      for (const pid of [running.pid!, ...childrenOf(running.pid!)]) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Gone already.
        }
      }
      await exited(running);
    },
    async promote() {
      // Not execFileSync: a test's requests in flight must be answered (and timed) while pg_ctl waits.
      await promisify(execFile)(
        "setpriv",
        [
          "--reuid=postgres",
          "--regid=postgres",
          "--init-groups",
          join(POSTGRES_BIN, "pg_ctl"),
          "promote",
          "-D",
          data,
          "-w",
          "-t",
          "30",
        ],
        { timeout: 40_000 },
      );
    },
  };
}

/** A process's children by PID, from Linux's /proc (the postmaster forks one per connection). */
function childrenOf(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
}

/** The `postgres` user's uid (`-u`) or gid (`-g`). */
function asPostgresId(flag: "-u" | "-g"): string {
  return execFileSync("id", [flag, USER], { encoding: "utf8" }).trim();
}
