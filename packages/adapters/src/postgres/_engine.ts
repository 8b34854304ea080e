import { StorageUnavailableError } from "@petstore/core";
import { withinDeadline } from "../_deadline.js";
import {
  afterThisTurn,
  type Result,
  type SqlEngine,
  type Statement,
  statementsOf,
  type Value,
} from "../_sql/engine.js";
import type { PostgresQueries, PostgresSource } from "./_client.js";
import { sqlState, storageError } from "./_storage-errors.js";

const DEFAULT_TIMEOUT_MS = 1_000;
const DEFAULT_MAX_QUEUED = 1_000;

/**
 * One statement on a client or a transaction, as the adapters read results. Prepared (named,
 * parsed and planned once per connection) unless it says `prepare: false` (a text made for one
 * occasion: a multi-row INSERT, one text per count, which a burst of 600 creates prepared on
 * every connection, past its 1 s bound), or the client was made with `prepare: false` (as
 * behind a pooler in transaction mode). postgres.js's `unsafe` prepares nothing unless asked,
 * and then plans every statement anew: about 5 ms for the limiter's, on every GET.
 */
async function run(queries: PostgresQueries, statement: Statement): Promise<Result> {
  const [text, args, prepare] =
    typeof statement === "string"
      ? [statement, [], true]
      : [statement.sql, statement.args ?? [], statement.prepare !== false];
  if (!Array.isArray(args)) throw new TypeError("Postgres statements take positional arguments ($1, $2...)");
  const rows = await queries.unsafe(text, args as Value[], { prepare });
  return { rows: Array.from(rows), rowsAffected: rows.count ?? 0 };
}

/**
 * What the statements are written for: under READ COMMITTED, `ON CONFLICT DO UPDATE` and
 * `FOR UPDATE` act on the newest committed row. A database whose default is REPEATABLE READ
 * or SERIALIZABLE (`ALTER DATABASE ... SET default_transaction_isolation`) would fail them
 * whenever another transaction changed that row first: a transaction says what it needs.
 */
const READ_COMMITTED = "SET TRANSACTION ISOLATION LEVEL READ COMMITTED";
/**
 * A serialization failure or a deadlock: the server rolled the whole transaction back, so it
 * may run again as it was. Under READ COMMITTED only a deadlock can happen; a single statement
 * (its own transaction, under the database's default isolation) may meet either.
 */
const RETRIED_STATES = new Set(["40001", "40P01"]);

/**
 * `first`, then `again` for as long as they fail with a state in RETRIED_STATES, until
 * `deadline` (`performance.now()`: a wall clock stepped back would stretch it). `again` runs
 * under READ COMMITTED: retried under a stricter default, a statement on a busy row would fail
 * each time another committed first.
 */
async function retried<T>(first: () => PromiseLike<T>, again: () => PromiseLike<T>, deadline: number): Promise<T> {
  for (let attempt = first; ; attempt = again) {
    try {
      return await attempt();
    } catch (error) {
      if (!RETRIED_STATES.has(sqlState(error) ?? "") || performance.now() >= deadline) throw error;
    }
  }
}

/**
 * The adapters' engine on a Postgres client. Every query and transaction is bounded: it fails
 * with `StorageUnavailableError` (a 503) once it took `timeoutMs` (the client may still finish
 * it), and at once when `maxQueued` are already waiting or running, counted until
 * the client settles them, so a hung server cannot pile up work. A write's unit is made after
 * this turn of the event loop (its callers of this turn join it, see `groupedWrites`), then
 * runs as one statement, or as one transaction when it has several (READ COMMITTED, whatever
 * the database's default). A statement or transaction the server rolled back for a
 * serialization failure or a deadlock runs again, as a READ COMMITTED transaction, within the
 * timeout; after the first such failure of a statement alone, every statement runs that way
 * from its first attempt (see `aloneIsSafe`). A commit is durable when
 * the server answers (`synchronous_commit` is the server's).
 */
function postgresEngine(source: PostgresSource): SqlEngine {
  const { sql } = source;
  const timeoutMs = source.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxQueued = source.maxQueued ?? DEFAULT_MAX_QUEUED;
  let queued = 0;
  /** Whether the last query settled failed as unavailable: only changes are told. */
  let failing = false;
  const settled = (problem: unknown) => {
    const reason = problem instanceof StorageUnavailableError ? problem.message : undefined;
    if ((reason !== undefined) === failing || (problem !== undefined && reason === undefined)) return;
    failing = reason !== undefined;
    source.onAvailabilityChange?.(reason);
  };

  /** `work`, failed once `timeoutMs` passed since `since` (performance.now(); by default now). */
  function bounded<T>(work: () => PromiseLike<T>, since = performance.now()): Promise<T> {
    const late = () => new StorageUnavailableError(`the Postgres server did not answer within ${timeoutMs} ms`);
    const left = since + timeoutMs - performance.now();
    if (left <= 0) {
      const refused = late();
      settled(refused);
      return Promise.reject(refused);
    }
    if (queued >= maxQueued) {
      const refused = new StorageUnavailableError(`${queued} queries are already waiting for the Postgres server`);
      settled(refused);
      return Promise.reject(refused);
    }
    queued++;
    let running: PromiseLike<T>;
    try {
      running = work();
    } catch (error) {
      queued--;
      const failure = storageError(error);
      settled(failure);
      return Promise.reject(failure);
    }
    const done = Promise.resolve(running).finally(() => queued--);
    return withinDeadline(done, left, late).then(
      (value) => {
        settled(undefined);
        return value;
      },
      (error: unknown) => {
        const failure = storageError(error);
        settled(failure);
        throw failure;
      },
    );
  }

  /** The statements as one READ COMMITTED transaction, whatever the database's default isolation. */
  const inTransaction = (statements: readonly Statement[]) =>
    sql.begin(async (transaction) => {
      await transaction.unsafe(READ_COMMITTED);
      const results: Result[] = [];
      for (const statement of statements) results.push(await run(transaction, statement));
      return results;
    }) as PromiseLike<Result[]>;

  /**
   * Whether a single statement runs alone, as its own transaction under the database's default
   * isolation: until one fails with a serialization failure, which only a default stricter than
   * READ COMMITTED gives. From then on each runs in a READ COMMITTED transaction from its first
   * attempt: alone, every statement on a busy row (the limiter's, in a burst) would fail once for
   * each other that committed on it first, and spend its bound on failures and retries.
   */
  let aloneIsSafe = true;
  const firstAttempt =
    <T>(alone: () => PromiseLike<T>, inReadCommitted: () => PromiseLike<T>) =>
    async (): Promise<T> => {
      if (!aloneIsSafe) return inReadCommitted();
      try {
        return await alone();
      } catch (error) {
        if (sqlState(error) === "40001") aloneIsSafe = false;
        throw error;
      }
    };

  const execute = (statement: Statement) => {
    const again = () => inTransaction([statement]).then(([result]) => result!);
    return bounded(() =>
      retried(
        firstAttempt(() => run(sql, statement), again),
        again,
        performance.now() + timeoutMs,
      ),
    );
  };
  return {
    inProcess: false,
    read: execute,
    // Every read is a new one: the server has every acknowledged write.
    readVersion: execute,
    write: (unit, options) =>
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
          const transaction = () => inTransaction(statements);
          const first =
            statements.length === 1 && only !== undefined
              ? firstAttempt(() => run(sql, only).then((result) => [result]), transaction)
              : transaction;
          const since = options?.askedAt ?? performance.now();
          bounded(() => retried(first, transaction, since + timeoutMs), since).then(resolve, reject);
        });
      }),
  };
}

/** The engine of each source, so that the four adapters made from one source share its bound. */
const engines = new WeakMap<PostgresSource, SqlEngine>();

/** The engine of a source (one per source object). */
export function engineOf(source: PostgresSource): SqlEngine {
  if (typeof source?.sql?.unsafe !== "function" || typeof source.sql.begin !== "function")
    throw new TypeError(
      "The Postgres adapters need { sql }: a postgres.js sql or Bun.sql, e.g. postgresAdapters({ sql: postgres(process.env.DATABASE_URL) })",
    );
  let engine = engines.get(source);
  if (engine === undefined) {
    engine = postgresEngine(source);
    engines.set(source, engine);
  }
  return engine;
}
