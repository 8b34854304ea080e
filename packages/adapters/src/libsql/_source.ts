import type { Client } from "@libsql/client";
import type { Row, SqlEngine, Value } from "../_sql/engine.js";
import { clientEngine } from "./_client-engine.js";

/**
 * A database `connectLibsql` opened (from `@petstore/adapters/libsql/connect`): hand it to the
 * adapters, which then use its engine (on a local file: prepared statements, group commit),
 * and close it when done.
 */
export interface LibsqlConnection {
  /** Runs one statement of your own (a report, a PRAGMA) on the same database; rows by column name. */
  execute(sql: string, args?: Value[]): Promise<Row[]>;
  /** Closes what `connectLibsql` opened; statements still in flight then fail. */
  close(): void;
}

/** What the libSQL adapters run on: any `@libsql/client` client, or a `LibsqlConnection`. */
export type LibsqlSource = { readonly client: Client } | LibsqlConnection;

/** The engine behind each connection this package made: kept out of the public type. */
const engines = new WeakMap<LibsqlConnection, SqlEngine>();

/** A connection over `engine`, closed by `close`: what `connectLibsql` (and a test of an engine) hands the adapters. */
export function libsqlConnection(engine: SqlEngine, close: () => void): LibsqlConnection {
  const connection: LibsqlConnection = {
    execute: async (sql, args = []) => (await engine.read({ sql, args })).rows,
    close,
  };
  engines.set(connection, engine);
  return connection;
}

/** The engine of a source. */
export function engineOf(source: LibsqlSource): SqlEngine {
  if (typeof source !== "object" || source === null)
    throw new TypeError(
      'The libSQL adapters need a database: what connectLibsql returned, or { client } of @libsql/client, e.g. libsqlAdapters(await connectLibsql({ url: "file:petstore.db" }))',
    );
  if ("client" in source) {
    if (typeof source.client?.execute !== "function")
      throw new TypeError("The libSQL adapters' { client } must be a client of @libsql/client (createClient({ url }))");
    return clientEngine(source.client);
  }
  const engine = engines.get(source);
  if (engine === undefined)
    throw new TypeError("Not a connection of connectLibsql: pass { client } or what connectLibsql returned");
  return engine;
}
