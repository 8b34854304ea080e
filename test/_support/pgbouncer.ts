import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";

/** The tables the four ports keep their data in. */
const DATA_TABLES =
  "pets, orders, accounts, api_keys, key_audit, key_usage_minutes, key_usage_days, admin_tokens, rate_limits, idempotency_keys, health_probe";

/**
 * Empties the ports' tables, between tests that share a database behind PgBouncer (which
 * passes no `search_path`, so a schema per test cannot be chosen), through a direct
 * connection. The audit trail refuses TRUNCATE to everyone but its table's owner, who may
 * set the trigger aside in a transaction, as here.
 */
export async function emptyDataTables(direct: {
  begin(run: (sql: { unsafe(query: string): PromiseLike<unknown> }) => Promise<unknown>): PromiseLike<unknown>;
}): Promise<void> {
  await direct.begin(async (sql) => {
    await sql.unsafe("ALTER TABLE key_audit DISABLE TRIGGER key_audit_never_truncated");
    await sql.unsafe(`TRUNCATE ${DATA_TABLES} RESTART IDENTITY`);
    await sql.unsafe("ALTER TABLE key_audit ENABLE TRIGGER key_audit_never_truncated");
  });
}

/** How PgBouncer hands server connections to its clients (`pool_mode`). */
export type PoolMode = "session" | "transaction" | "statement";

/** A running PgBouncer in front of a PostgreSQL server of the tests. */
export interface PgBouncer {
  readonly port: number;
  readonly poolMode: PoolMode;
  /** `postgres://postgres@127.0.0.1:PORT/DATABASE`: `database` on the server behind it. */
  url(database: string): string;
  /** Kills it (SIGKILL, by PID) and removes its directory; for `afterAll`. */
  stop(): Promise<void>;
}

/** Processes still running: killed (by PID) if the test process exits without stopping them. */
const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

const START_TIMEOUT_MS = 10_000;

function postgresId(flag: "-u" | "-g"): number {
  return Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
}

/**
 * Starts `pgbouncer` (installed by scripts/test-tools.sh) on a free loopback port in front of
 * the PostgreSQL server at `serverPort`: every database name passes through (`* =`), the
 * superuser `postgres` without a password (the tests' server trusts it on loopback), at most
 * `poolSize` server connections per database, in `poolMode`. It refuses to run as root, so it
 * runs as the `postgres` user (setpriv execs: the PID is PgBouncer's). Bounded: not listening
 * within 10 s fails.
 */
export async function startPgBouncer(serverPort: number, poolMode: PoolMode, poolSize = 10): Promise<PgBouncer> {
  const dir = mkdtempSync(join(tmpdir(), "petstore-pgbouncer-"));
  chownSync(dir, postgresId("-u"), postgresId("-g"));
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const config = join(dir, "pgbouncer.ini");
    writeFileSync(join(dir, "users.txt"), '"postgres" ""\n');
    writeFileSync(
      config,
      [
        "[databases]",
        `* = host=127.0.0.1 port=${serverPort}`,
        "[pgbouncer]",
        "listen_addr = 127.0.0.1",
        `listen_port = ${port}`,
        "unix_socket_dir =",
        "auth_type = trust",
        `auth_file = ${join(dir, "users.txt")}`,
        `pool_mode = ${poolMode}`,
        `default_pool_size = ${poolSize}`,
        "max_client_conn = 1000",
        "",
      ].join("\n"),
    );
    const child = spawn("setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", "pgbouncer", config], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.add(child);
    child.once("exit", () => running.delete(child));
    const started = await new Promise<string | undefined>((resolve) => {
      let output = "";
      const timer = setTimeout(
        () => resolve(`not listening within ${START_TIMEOUT_MS} ms: ${output}`),
        START_TIMEOUT_MS,
      );
      child.once("exit", () => {
        clearTimeout(timer);
        resolve(`exited: ${output}`);
      });
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        if (/process up/.test(output)) {
          clearTimeout(timer);
          child.removeAllListeners("exit");
          // Still read, and dropped: a full pipe would block its log writes.
          for (const stream of [child.stdout!, child.stderr!]) stream.removeAllListeners("data").resume();
          resolve(undefined);
        }
      };
      child.stdout!.on("data", read);
      child.stderr!.on("data", read);
    });
    if (started !== undefined) {
      child.kill("SIGKILL");
      if (attempt < 5 && /Address already in use/.test(started)) continue;
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`pgbouncer ${started.trim()}`);
    }
    return {
      port,
      poolMode,
      url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
      stop: async () => {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise((resolve) => child.once("exit", resolve));
          process.kill(child.pid!, "SIGKILL");
          await exited;
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
}
