import type { Client } from "@libsql/client";
import { type SqlEngine, statementsOf } from "../_sql/engine.js";
import { sqliteCode, storageError } from "./_storage-errors.js";

/**
 * The adapters' engine over any `@libsql/client` client: a remote server (`libsql://`,
 * `https://`, `@libsql/client/web` on the edge) or whatever else the client supports. One
 * `execute` per read, one `batch(..., "write")` per unit, made at once: no grouping across
 * callers, and a write is durable when the server says so.
 */
export function clientEngine(client: Client): SqlEngine {
  async function guard<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      // A local file opened while it was read-only stays read-only after it becomes writable
      // again: reopening the client's connections lets the next request recover.
      if (client.protocol === "file" && sqliteCode(error).startsWith("SQLITE_READONLY")) {
        try {
          await client.reconnect();
        } catch {
          // The request fails either way; a failed reconnect must not hide why.
        }
      }
      throw storageError(error);
    }
  }
  const execute: SqlEngine["read"] = (statement) => guard(() => client.execute(statement));
  return {
    inProcess: false,
    read: execute,
    // Every read is a new one: the server has every acknowledged write.
    readVersion: execute,
    write: (unit) => guard(() => client.batch([...statementsOf(unit)], "write")),
  };
}
