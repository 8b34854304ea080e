import type { Client } from "@libsql/client";
import { StorageUnavailableError } from "@petstore/core";
import type { LocalDatabase } from "./_local-database.js";

/** What the adapters bind: never booleans (the `libsql` package aborts the process on one). */
export type Value = string | number | null;
/**
 * SQL text, or SQL with positional (`?`) or named (`:name`, given without the colon) arguments.
 * `oneRow`: it returns at most one row, which a local database then reads the cheaper way.
 */
export type Statement = string | { sql: string; args?: Value[] | Record<string, Value>; oneRow?: boolean };
/** A row by column name. */
export type Row = Record<string, unknown>;
export interface Result {
  rows: Row[];
  /** Rows changed by a statement that returns no rows (`RETURNING` ones report 0). */
  rowsAffected: number;
}

/**
 * Error codes of `@libsql/client` that mean "the database cannot be used right now" rather
 * than "this statement is wrong": locked past the busy timeout, not writable, gone, or a
 * remote server that is down. They become a 503 the client may retry.
 */
const UNAVAILABLE_CODES = new Set([
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
  "SQLITE_READONLY",
  "SQLITE_IOERR",
  "SQLITE_CANTOPEN",
  "SQLITE_FULL",
  "SQLITE_PERM",
  "SQLITE_PROTOCOL",
  // The client was closed or reopened under an operation in flight (see `reconnect` below).
  "CLIENT_CLOSED",
  "SERVER_ERROR",
  "HRANA_CLOSED_ERROR",
  "HRANA_WEBSOCKET_ERROR",
]);

/** Socket errors a remote client can surface without wrapping them in a `LibsqlError`. */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EPIPE"]);

/** What an operator reads (in `/healthz`, in logs) for the codes that say why. */
const REASONS: Record<string, string> = {
  SQLITE_BUSY: "the database is locked by another connection",
  SQLITE_LOCKED: "the database is locked by another connection",
  SQLITE_READONLY: "the database is read-only",
  SQLITE_FULL: "the disk is full",
  SQLITE_IOERR: "the database file could not be read or written",
  SQLITE_CANTOPEN: "the database file cannot be opened",
  SQLITE_PERM: "the database file may not be written",
};

/**
 * Why storage cannot be used right now, in a few words, when `error` means that rather than
 * "this statement is wrong"; undefined otherwise.
 */
function unavailableReason(error: unknown): string | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof StorageUnavailableError) return cause.message;
    // `connectLibsql`'s deadline on a remote answer ran out mid-response.
    if (cause.name === "TimeoutError") return "the libSQL server did not answer in time";
    const code = (cause as { code?: unknown }).code;
    if (typeof code !== "string") continue;
    // Extended codes (SQLITE_IOERR_WRITE, SQLITE_BUSY_SNAPSHOT...) share their base code's meaning.
    const base = /^SQLITE_[A-Z]+/.exec(code)?.[0] ?? code;
    if (UNAVAILABLE_CODES.has(base)) return REASONS[base] ?? `the database is unavailable (${code})`;
    if (NETWORK_CODES.has(code)) return `the libSQL server is unreachable (${code})`;
  }
  return undefined;
}

/**
 * The local databases `connectLibsql` opened beside its clients. A client made some other way
 * (or a remote one) has none, and the adapters use the client itself.
 */
const locals = new WeakMap<Client, LocalDatabase>();

/** Lets the adapters on `client` run their statements on `local` instead (see `connectLibsql`). */
export function attachLocalDatabase(client: Client, local: LocalDatabase): void {
  locals.set(client, local);
}

export interface WriteOptions {
  /**
   * `"power-loss"` (the default): the write is fsynced before `write` resolves. `"process-crash"`:
   * on a local file it may be committed without an fsync of its own (WAL, `synchronous = NORMAL`):
   * it survives the process being killed at once, an OS crash or power cut only once the next
   * fsync (at most a second later) has run. A remote server keeps its own rules.
   */
  survives?: "power-loss" | "process-crash";
}

/** The database calls the adapters make, with storage failures turned into `StorageUnavailableError`. */
export interface Database {
  /** True when statements run in this process (a local file or `:memory:`): a small read costs microseconds, not a round trip. */
  inProcess: boolean;
  /**
   * How many write batches this process has begun on the database (0 on a remote one). A batch
   * begins after every write it holds was asked for, and commits before any other code runs.
   */
  batches(): number;
  /** A read (or a write that needs no transaction of its own). */
  execute(statement: Statement): Promise<Result>;
  /**
   * Commits the statements as one atomic unit (in a write transaction, `BEGIN IMMEDIATE` on a
   * local file) and resolves only once they are durable. On a local database the statements
   * are bound when their batch begins (`batches()` moves), so until then a caller may still
   * change their `args`: the limiter adds hits to a statement this way.
   */
  write(statements: readonly Statement[], options?: WriteOptions): Promise<Result[]>;
  /**
   * Settles once everything committed before the call, by any process, is on disk. A local
   * file may make a commit visible before its fsync is done (see `WalSync`): an answer built
   * from rows a client could not get back after a power cut (a pet listed, then gone, its id
   * handed out again) waits for this first. At once where commits are durable when visible.
   */
  durable(): Promise<void>;
}

export function database(client: Client): Database {
  const local = locals.get(client);
  async function guard<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof StorageUnavailableError) throw error;
      const reason = unavailableReason(error);
      if (reason === undefined) throw error;
      // A local connection opened while the file was read-only stays read-only after the file
      // becomes writable again: reopening the connections lets the next request recover.
      if (client.protocol === "file" && /^SQLITE_READONLY/.test(String((error as { code?: unknown }).code))) await client.reconnect();
      throw new StorageUnavailableError(reason, { cause: error });
    }
  }
  if (local) {
    return {
      inProcess: true,
      batches: () => local.batches(),
      execute: (statement) => guard(() => local.execute(statement)),
      write: (statements, options) => guard(() => local.write(statements, options)),
      durable: () => guard(() => local.durable()),
    };
  }
  return {
    inProcess: false,
    batches: () => 0,
    execute: (statement) => guard(() => client.execute(statement)),
    write: (statements) => guard(() => client.batch([...statements], "write")),
    durable: () => Promise.resolve(),
  };
}
