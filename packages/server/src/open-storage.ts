import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { checkLibsql, libsqlAdapters, migrate } from "@petstore/adapters/libsql";
import { connectLibsql, databaseLocation, type StorageObserver } from "@petstore/adapters/libsql/connect";
import { memoryAdapters } from "@petstore/adapters/memory";
import { checkPostgres, migratePostgres, postgresAdapters } from "@petstore/adapters/postgres";
import type { ApiKeys, IdempotencyStore, PetStore, RateLimiter } from "@petstore/core";
import { postgresConnection } from "./postgres-connection.js";
import { postgresStartFailure } from "./postgres-start-failure.js";
import { transactionPooling } from "./transaction-pooling.js";

/** Where the data lives, as `connectLibsql` takes it; read from flags and the environment by `commands/_options.ts`. */
export interface DbConfig {
  url: string;
  authToken?: string;
  busyTimeoutMs?: number;
  /** A Postgres password from the environment (`PGPASSWORD`), for a URL without one. */
  password?: string;
}

/** A Postgres URL: `postgres://` or `postgresql://`. */
export const POSTGRES_URL = /^postgres(ql)?:\/\/.+/;
/** Connections each server keeps to Postgres at most; queries beyond them wait, at most POSTGRES_MAX_QUEUED at once. */
const POSTGRES_POOL_SIZE = 10;
const POSTGRES_MAX_QUEUED = 1_000;
/** How long a Postgres query may take before its request gets a 503 (PETSTORE_DB_BUSY_TIMEOUT_MS overrides). */
const POSTGRES_TIMEOUT_MS = 1_000;

/** The four ports over one database, a health check, and the way to close it. */
export interface Storage {
  adapters: { store: PetStore; keys: ApiKeys; limiter: RateLimiter; idempotency: IdempotencyStore };
  /**
   * Resolves with the database's clock (Unix ms), which decides every window, ban and expiry,
   * when the database takes reads and writes now; rejects with the reason.
   */
  check(): Promise<number>;
  /** The database runs elsewhere (a server), on a clock of its own; not a file or memory of this machine. */
  remote: boolean;
  /** What the server's `listening` line also says about the database, e.g. a pooler found in front. */
  notes?: Record<string, string>;
  close(): void;
}

/**
 * Connects to the database and brings its schema up to date (migrations are idempotent and
 * safe when several processes start at once). `:memory:` is private to this process and
 * gone at exit, so it is served by the memory adapters: the same contract, exactly as
 * exact, without a SQL engine on every request.
 */
export async function openStorage(db: DbConfig, observer?: StorageObserver): Promise<Storage> {
  // In this process: its clock is the store's.
  if (databaseLocation(db.url).kind === "memory") return { adapters: memoryAdapters(), check: async () => Date.now(), remote: false, close: () => {} };
  if (POSTGRES_URL.test(db.url)) return openPostgres(db);
  // The observer (metrics) hears a local file's group commits and fsyncs.
  const connection = await connectLibsql(observer ? { ...db, observer } : db).catch((error: unknown) => {
    throw new Error(openFailure(db.url, error), { cause: error });
  });
  try {
    await migrate(connection);
  } catch (error) {
    connection.close();
    throw error;
  }
  return {
    adapters: libsqlAdapters(connection),
    check: () => checkLibsql(connection),
    remote: databaseLocation(db.url).kind !== "file",
    close: () => connection.close(),
  };
}

/** Why a libSQL database could not be opened, in one line: a local file's missing directory by name, not the driver's code. */
function openFailure(url: string, error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
  const location = databaseLocation(url);
  if (location.kind !== "file") return `cannot open ${url.replace(/\?.*$/, "").replace(/\/\/[^/@]*@/, "//")}: ${message}`;
  const directory = dirname(resolve(location.path));
  if (!existsSync(directory)) return `cannot open database ${resolve(location.path)}: the directory ${directory} does not exist`;
  return `cannot open database ${resolve(location.path)}: ${message}`;
}

/**
 * Postgres through postgres.js, bundled into the binary: one client under Bun and Deno (Bun.sql
 * exists only under Bun, so Deno would need postgres.js anyway), the one the tests run under
 * Node too, so the binary's pool, reconnects and errors are the tested ones. Bun.sql works
 * through the adapters' port as well, for users who mount the library in Bun. A pool of at
 * most POSTGRES_POOL_SIZE connections, opened as needed and again after the server was lost;
 * every query bounded in time and in how many may wait (see `PostgresSource`), so a lost
 * server gives 503s, never hung requests. Fails with one line when the server cannot be
 * reached or migrated at start.
 */
async function openPostgres(db: DbConfig): Promise<Storage> {
  // Imported here, not at the top: the binary then loads postgres.js and the built-in modules
  // it needs (node:net, node:tls...) only for a Postgres URL (see build.ts, `splitting`).
  const { default: postgres } = await import("postgres");
  // Several hosts and libpq's parameters, read as postgres-connection.ts says.
  const connection = postgresConnection(db.url);
  const options = {
    max: POSTGRES_POOL_SIZE,
    // Seconds: a server that does not accept the connection fails the query (a 503) in time.
    connect_timeout: 5,
    idle_timeout: 60,
    max_lifetime: 30 * 60,
    // Reconnecting after the server was lost: at most a second apart, so service resumes soon.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    onnotice: () => {},
    ...(db.password === undefined ? {} : { password: db.password }),
    ...connection.options,
  };
  // Migrated, and asked whether a pooler in transaction mode is in front (see
  // transaction-pooling.ts), on two connections that prepare nothing; the pool then prepares
  // its statements unless such a pooler would lose them (or the URL says prepare=false).
  const setup = postgres(connection.url, { ...options, max: 2, prepare: false });
  let pooled: boolean;
  try {
    await migratePostgres({ sql: setup });
    pooled = await transactionPooling(setup);
  } catch (error) {
    throw new Error(`cannot open ${db.url.replace(/\/\/[^/@]*@/, "//")}: ${await postgresStartFailure(error, setup, db.url)}`, { cause: error });
  } finally {
    void setup.end({ timeout: 5 }).catch(() => {});
  }
  const sql = postgres(connection.url, { ...options, prepare: options.prepare && !pooled });
  const source = { sql, timeoutMs: db.busyTimeoutMs ?? POSTGRES_TIMEOUT_MS, maxQueued: POSTGRES_MAX_QUEUED };
  const close = () => void sql.end({ timeout: 5 }).catch(() => {});
  return {
    adapters: postgresAdapters(source),
    check: () => checkPostgres(source),
    remote: true,
    close,
    ...(pooled && { notes: { dbPooling: "transaction (statements not prepared)" } }),
  };
}
