import type { Client } from "@libsql/client";
import { clientEngine } from "./_client-engine.js";
import type { LibsqlEngine, Row, Value } from "./_engine.js";

/**
 * A database `connectLibsql` opened (from `@petstore/adapters/libsql/connect`): hand it to the
 * adapters, which then use its engine (on a local file: prepared statements, group commit),
 * and close it when done.
 */
export interface LibsqlConnection {
  /** What the adapters run on. */
  readonly engine: LibsqlEngine;
  /** Runs one statement of your own (a report, a PRAGMA) on the same database; rows by column name. */
  execute(sql: string, args?: Value[]): Promise<Row[]>;
  /** Closes what `connectLibsql` opened; statements still in flight then fail. */
  close(): void;
}

/** What the libSQL adapters run on: any `@libsql/client` client, or a `LibsqlConnection`. */
export type LibsqlSource = { readonly client: Client } | LibsqlConnection;

/** The engine of a source. */
export function engineOf(source: LibsqlSource): LibsqlEngine {
  return "engine" in source ? source.engine : clientEngine(source.client);
}
