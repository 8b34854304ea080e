import type { Row, Value } from "../_sql/engine.js";

/** Statements on a client or in one of its transactions: `$1`, `$2`... bound from `parameters`. */
export interface PostgresQueries {
  /**
   * The rows, with `count`: the rows a statement changed or returned. `options.prepare`:
   * postgres.js's, a named prepared statement (parsed and planned once per connection) unless
   * the client was made with `prepare: false`; other clients may ignore it.
   */
  unsafe(
    query: string,
    parameters?: Value[],
    options?: { prepare?: boolean },
  ): PromiseLike<ArrayLike<Row> & { count?: number | null }>;
}

/**
 * The client the Postgres adapters run on: a query with parameters, and a transaction. A
 * `postgres` (postgres.js) `sql` instance is one, and so is Bun's built-in `Bun.sql` (or a
 * `new SQL(url)`): the adapters load neither; the client, its pool and its credentials are the
 * caller's.
 * @example
 * import postgres from "postgres";
 * const sql = postgres(process.env.DATABASE_URL!, { max: 10 });
 */
export interface PostgresClient extends PostgresQueries {
  /** Runs `run` in one transaction (`BEGIN` ... `COMMIT`, `ROLLBACK` when it throws) on one connection. */
  begin(run: (transaction: PostgresQueries) => Promise<unknown>): PromiseLike<unknown>;
}

/** What the Postgres adapters run on: the client, and how long and how many queries may wait on it. */
export interface PostgresSource {
  /** A postgres.js `sql`, or `Bun.sql`. */
  readonly sql: PostgresClient;
  /**
   * How long one query or transaction may take before its request gets a 503 (the database
   * down, hung, or its pool busy). Default 1000.
   */
  readonly timeoutMs?: number;
  /**
   * Most queries and transactions waiting or running at once; past it a query fails at once
   * with a 503 instead of queueing for the pool. Default 1000.
   */
  readonly maxQueued?: number;
  /**
   * Told when queries start failing because the database cannot be used (down, hung past the
   * timeout, out of connections: the reason, in the server's words where it gave some) and when
   * one succeeds again (`undefined`): for a log line per outage instead of one per request. A
   * query answered after its timeout says nothing: a database slow enough to time out is not
   * back until one is answered in time.
   */
  readonly onAvailabilityChange?: (problem: string | undefined) => void;
}
