import { storageErrors } from "../_storage-errors.js";

/**
 * Error codes of `@libsql/client` and the `libsql` package that mean "the database cannot be
 * used right now" rather than "this statement is wrong": locked past the busy timeout, not
 * writable, full, gone, or a remote server that is down. They become a 503 the client may retry.
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
  // The client or engine was closed under an operation in flight.
  "CLIENT_CLOSED",
  "SERVER_ERROR",
  "HRANA_CLOSED_ERROR",
  "HRANA_WEBSOCKET_ERROR",
]);

/** Socket errors a remote client can surface without wrapping them in a `LibsqlError`. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
]);

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

/** The SQLite error code of `error` (`SQLITE_READONLY_DBMOVED`...), if it has one. */
export function sqliteCode(error: unknown): string {
  return String((error as { code?: unknown } | undefined)?.code);
}

/** The adapters' failure for a libSQL error (see `storageErrors`). */
const unavailable = storageErrors((cause) => {
  // `connectLibsql`'s deadline on a remote answer ran out mid-response.
  if (cause.name === "TimeoutError") return "the libSQL server did not answer in time";
  const code = (cause as { code?: unknown }).code;
  if (typeof code !== "string") return undefined;
  // Extended codes (SQLITE_IOERR_WRITE, SQLITE_BUSY_SNAPSHOT...) share their base code's meaning.
  const base = /^SQLITE_[A-Z]+/.exec(code)?.[0] ?? code;
  if (UNAVAILABLE_CODES.has(base)) return REASONS[base] ?? `the database is unavailable (${code})`;
  if (NETWORK_CODES.has(code)) return `the libSQL server is unreachable (${code})`;
  return undefined;
});

/**
 * The adapters' failure for a libSQL error: storage that cannot be used now is a
 * `StorageUnavailableError` (see `storageErrors`); a database without the adapters' tables
 * says the fix (`migrate`: `migrateLibsql`, or `migrateD1` on D1) rather than SQLite's `no such
 * table`, keeping its code. The adapters do not migrate on open: they are factories a request
 * path makes at once, and migrating is a write one process makes at start (as `petstore serve`
 * does), not every isolate on every open.
 */
export function storageError(error: unknown, migrate = "migrateLibsql"): unknown {
  const table = error instanceof Error ? /no such table: (\w+)/.exec(error.message)?.[1] : undefined;
  if (table === undefined) return unavailable(error);
  return Object.assign(
    new Error(`the database has no table ${table}: run ${migrate} on it before the adapters use it`, { cause: error }),
    { code: sqliteCode(error) },
  );
}
