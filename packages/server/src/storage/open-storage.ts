import { firstLine } from "../messages/first-line.js";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { checkLibsql, libsqlAdapters, libsqlAdminTokens, migrateLibsql } from "@petstore/adapters/libsql";
import { connectLibsql, databaseLocation, type StorageObserver } from "@petstore/adapters/libsql/connect";
import { memoryAdapters, memoryAdminTokens } from "@petstore/adapters/memory";
import {
  checkPostgres,
  migratePostgres,
  postgresAdapters,
  postgresAdminTokens,
  type PostgresSource,
} from "@petstore/adapters/postgres";
import type { Adapters, AdminTokens } from "@petstore/core";
import { databaseAccessProblem, type StorageAdvice } from "./database-access.js";
import { postgresConnection } from "./postgres-connection.js";
import { postgresStartFailure } from "./postgres-start-failure.js";
import { shownUrl } from "../messages/shown-url.js";
import { refusedStartupParameter, transactionPooling } from "./transaction-pooling.js";

/** Where the data lives, as `connectLibsql` takes it; read from flags and the environment by `commands/_options.ts`. */
export interface DbConfig {
  url: string;
  authToken?: string;
  busyTimeoutMs?: number;
  /** A Postgres password from the environment (`PGPASSWORD`), for a URL without one. */
  password?: string;
  /** How a failure to open it tells the user to fix it; absent: as if `--db` named it and `petstore` ran. */
  advice?: StorageAdvice;
}

/** A Postgres URL: `postgres://` or `postgresql://`. */
export const POSTGRES_URL = /^postgres(ql)?:\/\/.+/;
/** Connections each server keeps to Postgres at most; queries beyond them wait, at most POSTGRES_MAX_QUEUED at once. */
const POSTGRES_POOL_SIZE = 10;
const POSTGRES_MAX_QUEUED = 1_000;
/** How long a pooled connection may stay idle before it is closed, in seconds. */
const POSTGRES_IDLE_TIMEOUT_S = 10;
/** How long a Postgres query may take before its request gets a 503 (PETSTORE_DB_BUSY_TIMEOUT_MS overrides). */
const POSTGRES_TIMEOUT_MS = 1_000;

/** The four ports over one database, a health check, and the way to close it. */
export interface Storage {
  adapters: Adapters;
  /** The admin listener's credentials (`petstore admin-tokens`), in the same database. */
  adminTokens: AdminTokens;
  /**
   * Resolves with the database's clock (Unix ms), which decides every window, ban and expiry,
   * when the database takes reads and writes now; rejects with the reason.
   */
  check(): Promise<number>;
  /** The database runs elsewhere (a server), on a clock of its own; not a file or memory of this machine. */
  remote: boolean;
  /** What the server's `listening` line also says about the database, e.g. a pooler found in front. */
  notes?: Record<string, string>;
  /**
   * A setting every server on the database must share (`settings` table): the value recorded
   * for `name`, recording `value` when none is (the first server's wins); with `replace`,
   * `value` is recorded over any other. Resolves with what is recorded now and what was before.
   */
  setting(name: string, value: string, replace: boolean): Promise<{ recorded: string; before: string | undefined }>;
  /** What the servers recorded for `name` (see `setting`), recording nothing: for the commands that only look. */
  recordedSetting(name: string): Promise<string | undefined>;
  close(): void;
}

/** `Storage.setting` and `recordedSetting` over statements of one dialect: an insert that keeps what is there, an upsert, a read. */
function settings(
  run: (sql: string, args: (string | number)[]) => Promise<Record<string, unknown>[]>,
  [keep, replace, read]: readonly [string, string, string],
): Pick<Storage, "setting" | "recordedSetting"> {
  const recordedSetting = async (name: string) => {
    const found = await run(read, [name]);
    return found[0] === undefined ? undefined : String(found[0].value);
  };
  return {
    recordedSetting,
    setting: async (name, value, replacing) => {
      const before = await recordedSetting(name);
      await run(replacing ? replace : keep, [name, value, Date.now()]);
      return { recorded: (await recordedSetting(name))!, before };
    },
  };
}

/**
 * Connects to the database and brings its schema up to date (migrations are idempotent and
 * safe when several processes start at once). `:memory:` is private to this process and
 * gone at exit, so it is served by the memory adapters: the same contract, exactly as
 * exact, without a SQL engine on every request.
 */
export async function openStorage(
  db: DbConfig,
  observer?: StorageObserver & Pick<PostgresSource, "onAvailabilityChange">,
): Promise<Storage> {
  if (databaseLocation(db.url).kind === "memory") {
    // Private to this process: nobody to agree with, and its clock is the store's.
    return {
      adapters: memoryAdapters(),
      adminTokens: memoryAdminTokens(),
      check: async () => Date.now(),
      remote: false,
      setting: async (_, value) => ({ recorded: value, before: undefined }),
      recordedSetting: async () => undefined,
      close: () => {},
    };
  }
  if (POSTGRES_URL.test(db.url)) return openPostgres(db, observer?.onAvailabilityChange);
  // The observer (metrics) hears a local file's group commits and fsyncs.
  const connection = await connectLibsql(observer ? { ...db, observer } : db).catch((error: unknown) => {
    throw new Error(openFailure(db, error), { cause: error });
  });
  try {
    await migrateLibsql(connection);
  } catch (error) {
    connection.close();
    throw new Error(`cannot open ${shownUrl(db.url)}: ${storageFailure(db, error)}`, { cause: error });
  }
  return {
    adapters: libsqlAdapters(connection),
    adminTokens: libsqlAdminTokens(connection),
    check: () => checkLibsql(connection),
    remote: databaseLocation(db.url).kind !== "file",
    ...settings(
      (sql, args) => connection.execute(sql, args),
      [
        "INSERT INTO settings (name, value, changed_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
        "INSERT INTO settings (name, value, changed_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value, changed_at = excluded.changed_at",
        "SELECT value FROM settings WHERE name = ?",
      ],
    ),
    close: () => connection.close(),
  };
}

/** Why a libSQL database could not be opened, in one line: a local file's missing directory by name, not the driver's code. */
function openFailure(db: DbConfig, error: unknown): string {
  const location = databaseLocation(db.url);
  if (location.kind !== "file") return `cannot open ${shownUrl(db.url)}: ${firstLine(error)}`;
  const directory = dirname(resolve(location.path));
  if (!existsSync(directory))
    return `cannot open database ${resolve(location.path)}: the directory ${directory} does not exist`;
  return `cannot open database ${resolve(location.path)}: ${storageFailure(db, error)}`;
}

/**
 * Why storage failed, in one line: for a local file this process may not write (another
 * user's, a directory that takes no files), who owns what and the fix; else the error's own
 * first line ("the database is read-only" alone named neither).
 */
export function storageFailure(db: DbConfig, error: unknown): string {
  const location = databaseLocation(db.url);
  const advice = db.advice ?? { setting: "--db", program: "petstore" };
  return (
    (location.kind === "file" ? databaseAccessProblem(resolve(location.path), advice) : undefined) ?? firstLine(error)
  );
}

/** A refused login, with where the password came from (never the password) and whose it must be. */
function passwordHint(error: unknown, url: URL, fromEnvironment: string | undefined): string {
  const code = (error as { code?: unknown }).code;
  if (code !== "28P01" && !/password authentication failed|password must be/i.test(firstLine(error))) return "";
  const user =
    url.username === ""
      ? "the user PGUSER or your login names (the URL names none)"
      : `the URL's user ${decodeURIComponent(url.username)}`;
  if (url.password !== "")
    return ` (the password in the URL was refused for ${user}: check it, or drop it from the URL and set PGPASSWORD)`;
  if (fromEnvironment !== undefined)
    return ` (PGPASSWORD was refused for ${user}: check the password, and the user in the URL)`;
  return ` (no password was given for ${user}: set PGPASSWORD, or put it in the URL as postgres://USER:PASSWORD@HOST/DATABASE)`;
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
async function openPostgres(
  db: DbConfig,
  onAvailabilityChange?: PostgresSource["onAvailabilityChange"],
): Promise<Storage> {
  // Imported here, not at the top: the binary then loads postgres.js and the built-in modules
  // it needs (node:net, node:tls...) only for a Postgres URL (see build.ts, `splitting`).
  const { default: postgres } = await import("postgres");
  // Several hosts and libpq's parameters, read as postgres-connection.ts says.
  const connection = postgresConnection(db.url);
  const url = new URL(connection.firstHost);
  const options = {
    max: POSTGRES_POOL_SIZE,
    // Seconds: a server that does not accept the connection fails the query (a 503) in time.
    connect_timeout: 5,
    // Seconds: a server past its load gives its connections back soon, so that the others
    // (and psql) find free slots when max_connections is tight.
    idle_timeout: POSTGRES_IDLE_TIMEOUT_S,
    max_lifetime: 30 * 60,
    // Reconnecting after the server was lost: at most a second apart, so service resumes soon.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    onnotice: () => {},
    ...(db.password === undefined ? {} : { password: db.password }),
    ...connection.options,
  };
  // The isolation the statements are written for, whatever the database's default (an
  // operator's ALTER DATABASE ... SET default_transaction_isolation = 'serializable' made
  // most of a burst fail). The adapters set it per transaction too; here it saves them retries.
  // PgBouncer refuses a startup parameter it does not track: behind it, none is sent.
  let startup: { connection?: Record<string, string> } = {
    connection: { default_transaction_isolation: "read committed" },
  };
  // Migrated, and asked whether a pooler in transaction mode is in front (see
  // transaction-pooling.ts), on two connections that prepare nothing; the pool then prepares
  // its statements unless such a pooler would lose them (or the URL says prepare=false).
  const setupClient = () => postgres(connection.url, { ...options, ...startup, max: 2, prepare: false });
  let setup = setupClient();
  let pooled: boolean;
  try {
    await migratePostgres({ sql: setup }).catch(async (error: unknown) => {
      if (!refusedStartupParameter(error)) throw error;
      void setup.end({ timeout: 5 }).catch(() => {});
      startup = {};
      setup = setupClient();
      await migratePostgres({ sql: setup });
    });
    pooled = await transactionPooling(setup);
  } catch (error) {
    throw new Error(
      `cannot open ${shownUrl(db.url)}: ${await postgresStartFailure(error, setup, db.url)}${passwordHint(error, url, db.password)}`,
      { cause: error },
    );
  } finally {
    void setup.end({ timeout: 5 }).catch(() => {});
  }
  const sql = postgres(connection.url, { ...options, ...startup, prepare: options.prepare && !pooled });
  const source: PostgresSource = {
    sql,
    timeoutMs: db.busyTimeoutMs ?? POSTGRES_TIMEOUT_MS,
    maxQueued: POSTGRES_MAX_QUEUED,
    ...(onAvailabilityChange && { onAvailabilityChange }),
  };
  const close = () => void sql.end({ timeout: 5 }).catch(() => {});
  return {
    adapters: postgresAdapters(source),
    adminTokens: postgresAdminTokens(source),
    check: () => checkPostgres(source),
    remote: true,
    ...(pooled && { notes: { dbPooling: "transaction (statements not prepared)" } }),
    ...settings(
      async (text, args) => Array.from(await sql.unsafe(text, args)),
      [
        "INSERT INTO settings (name, value, changed_at) VALUES ($1::text, $2::text, $3::bigint) ON CONFLICT (name) DO NOTHING",
        "INSERT INTO settings (name, value, changed_at) VALUES ($1::text, $2::text, $3::bigint) ON CONFLICT (name) DO UPDATE SET value = excluded.value, changed_at = excluded.changed_at",
        "SELECT value FROM settings WHERE name = $1::text",
      ],
    ),
    close,
  };
}
