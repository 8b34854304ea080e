import { StorageUnavailableError } from "@petstore/core";
import { afterThisTurn, type Result, type SqlEngine, type Statement, statementsOf, type Value } from "../_sql/engine.js";
import type { PostgresQueries, PostgresSource } from "./_client.js";
import { storageError } from "./_storage-errors.js";

const DEFAULT_TIMEOUT_MS = 1_000;
const DEFAULT_MAX_QUEUED = 1_000;

/**
 * One statement on a client or a transaction, as the adapters read results. Prepared (named,
 * parsed and planned once per connection: postgres.js's `unsafe` prepares nothing unless asked,
 * and plans the limiter's statement anew each time, about 5 ms) unless the client was made
 * with `prepare: false`, as behind a pooler in transaction mode.
 */
async function run(queries: PostgresQueries, statement: Statement): Promise<Result> {
  const [text, args] = typeof statement === "string" ? [statement, []] : [statement.sql, statement.args ?? []];
  if (!Array.isArray(args)) throw new TypeError("Postgres statements take positional arguments ($1, $2...)");
  const rows = await queries.unsafe(text, args as Value[], { prepare: true });
  return { rows: Array.from(rows), rowsAffected: rows.count ?? 0 };
}

/**
 * The adapters' engine on a Postgres client. Every query and transaction is bounded: it fails
 * with `StorageUnavailableError` (a 503) once it took `timeoutMs` (the client may still finish
 * it), and at once when `maxQueued` are already waiting or running, counted until
 * the client settles them, so a hung server cannot pile up work. A write's unit is made after
 * this turn of the event loop (its callers of this turn join it, see `groupedWrites`), then
 * runs as one statement, or as one transaction when it has several. A commit is durable when
 * the server answers (`synchronous_commit` is the server's).
 */
export function postgresEngine(source: PostgresSource): SqlEngine {
  const { sql } = source;
  const timeoutMs = source.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxQueued = source.maxQueued ?? DEFAULT_MAX_QUEUED;
  let queued = 0;

  function bounded<T>(work: () => PromiseLike<T>): Promise<T> {
    if (queued >= maxQueued) {
      return Promise.reject(new StorageUnavailableError(`${queued} queries are already waiting for the Postgres server`));
    }
    queued++;
    let running: PromiseLike<T>;
    try {
      running = work();
    } catch (error) {
      queued--;
      return Promise.reject(storageError(error));
    }
    const settled = Promise.resolve(running).finally(() => queued--);
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new StorageUnavailableError(`the Postgres server did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      settled.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(storageError(error));
        },
      );
    });
  }

  const execute = (statement: Statement) => bounded(() => run(sql, statement));
  return {
    inProcess: false,
    execute,
    // Every read is a new one: the server has every acknowledged write.
    readLatest: execute,
    write: (unit) =>
      new Promise<Result[]>((resolve, reject) => {
        afterThisTurn(() => {
          let statements: readonly Statement[];
          try {
            statements = statementsOf(unit);
          } catch (error) {
            reject(error);
            return;
          }
          const [only] = statements;
          const work =
            statements.length === 1 && only !== undefined
              ? () => run(sql, only).then((result) => [result])
              : () =>
                  sql.begin(async (transaction) => {
                    const results: Result[] = [];
                    for (const statement of statements) results.push(await run(transaction, statement));
                    return results;
                  }) as PromiseLike<Result[]>;
          bounded(work).then(resolve, reject);
        });
      }),
    durable: () => Promise.resolve(),
  };
}

/** The engine of each source, so that the four adapters made from one source share its bound. */
const engines = new WeakMap<PostgresSource, SqlEngine>();

/** The engine of a source (one per source object). */
export function engineOf(source: PostgresSource): SqlEngine {
  let engine = engines.get(source);
  if (engine === undefined) {
    engine = postgresEngine(source);
    engines.set(source, engine);
  }
  return engine;
}
