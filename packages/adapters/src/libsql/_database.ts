import type { Client, InStatement, ResultSet } from "@libsql/client";
import { StorageUnavailableError } from "@petstore/core";

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

function isUnavailable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    // TimeoutError: `connectLibsql`'s deadline on a remote answer ran out mid-response.
    if (cause instanceof StorageUnavailableError || cause.name === "TimeoutError") return true;
    const code = (cause as { code?: unknown }).code;
    if (typeof code !== "string") continue;
    // Extended codes (SQLITE_IOERR_WRITE, SQLITE_BUSY_SNAPSHOT...) share their base code's meaning.
    const base = /^SQLITE_[A-Z]+/.exec(code)?.[0] ?? code;
    if (UNAVAILABLE_CODES.has(base) || NETWORK_CODES.has(code)) return true;
  }
  return false;
}

/** The client calls the adapters make, with storage failures turned into `StorageUnavailableError`. */
export interface Database {
  execute(statement: InStatement): Promise<ResultSet>;
  /** Runs the statements in one write transaction (`BEGIN IMMEDIATE` on a local file). */
  write(statements: InStatement[]): Promise<ResultSet[]>;
}

export function database(client: Client): Database {
  async function guard<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (!isUnavailable(error)) throw error;
      // A local connection opened while the file was read-only stays read-only after the file
      // becomes writable again: reopening the pool lets the next request recover.
      if (client.protocol === "file" && (error as { code?: unknown }).code === "SQLITE_READONLY") await client.reconnect();
      throw new StorageUnavailableError("The database is unavailable", { cause: error });
    }
  }
  return {
    execute: (statement) => guard(() => client.execute(statement)),
    write: (statements) => guard(() => client.batch(statements, "write")),
  };
}
