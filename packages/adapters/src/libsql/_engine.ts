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
 * One atomic unit of a write: its statements, or a function that makes them when the write
 * runs. A local engine runs the writes of one event-loop turn in one transaction (group
 * commit), so an adapter can let later callers join a unit until then (the limiter's hits on
 * one bucket, the store's creates) and build the final statement once, when it is called.
 */
export type Unit = readonly Statement[] | (() => readonly Statement[]);

export interface WriteOptions {
  /**
   * `"power-loss"` (the default): the write is fsynced before `write` resolves. `"process-crash"`:
   * on a local file it may be committed without an fsync of its own (WAL, `synchronous = NORMAL`):
   * it survives the process being killed at once, an OS crash or power cut only once the next
   * fsync (at most a second later) has run. A remote server keeps its own rules.
   */
  survives?: "power-loss" | "process-crash";
}

/**
 * How the libSQL adapters reach their database: over any `@libsql/client` client
 * (`clientEngine`), or a local file's native connection with group commit (`localEngine`, in
 * the `connect` entry). Failures that mean "storage cannot be used now" reject with
 * `StorageUnavailableError` (a 503); a wrong statement rejects with the driver's error.
 */
export interface LibsqlEngine {
  /** True when statements run in this process (a local file or `:memory:`): a small read costs microseconds, not a round trip. */
  readonly inProcess: boolean;
  /** A read (or a write that needs no transaction of its own). */
  execute(statement: Statement): Promise<Result>;
  /**
   * Commits the unit's statements atomically (in a write transaction, `BEGIN IMMEDIATE` on a
   * local file) and resolves, with one result per statement, once they are durable.
   */
  write(unit: Unit, options?: WriteOptions): Promise<Result[]>;
  /**
   * Settles once everything committed before the call, by any process, is on disk. A local
   * file may make a commit visible before its fsync is done: an answer built from rows a
   * client could not get back after a power cut (a pet listed, then gone, its id handed out
   * again) waits for this first. At once where commits are durable when visible.
   */
  durable(): Promise<void>;
  /**
   * How many write batches this process has begun on the database (0 where writes are not
   * batched). A batch begins after every write it holds was asked for, and commits before
   * any other code runs: a value read while this number stays put is the latest of this
   * process's writes (see `libsqlStore`'s version read).
   */
  batches(): number;
}

/** The statements of a unit, made now if it is a function. */
export function statementsOf(unit: Unit): readonly Statement[] {
  return typeof unit === "function" ? unit() : unit;
}
