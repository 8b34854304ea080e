// The seam between the SQL adapters and the engines they run on (a local libSQL file, a
// `@libsql/client` client, D1, Postgres). Private to the package: users hand the adapters a
// source (a client, a connection), never an engine.

/** What the adapters bind: never booleans (the `libsql` package aborts the process on one). */
export type Value = string | number | null;
/**
 * SQL text, or SQL with positional arguments (`?` in SQLite, `$1` in Postgres) or named ones
 * (`:name` in SQLite, given without the colon). `oneRow`: it returns at most one row, which a
 * local database then reads the cheaper way.
 */
export type Statement =
  | string
  | {
      sql: string;
      args?: Value[] | Record<string, Value>;
      oneRow?: boolean;
      /**
       * false: a text made for one occasion (a multi-row INSERT of as many rows as arrived),
       * which an engine that prepares its statements (Postgres) does not prepare. Default true.
       */
      prepare?: boolean;
    };
/** A row by column name. */
export type Row = Record<string, unknown>;
export interface Result {
  rows: Row[];
  /** Rows changed by a statement that returns no rows (`RETURNING` ones report 0). */
  rowsAffected: number;
}

/**
 * One atomic unit of a write: its statements, or a function that makes them when the engine
 * runs the write. Until the engine calls it, callers may join what it will write (see
 * `groupedWrites`); an engine calls it once, at the latest after the turn of the event loop in
 * which the write was asked for, so that the callers of one turn share it.
 */
export type Unit = readonly Statement[] | (() => readonly Statement[]);

export interface WriteOptions {
  /**
   * `"power-loss"` (the default): the write is fsynced before `write` resolves. `"process-crash"`:
   * on a local file it may be committed without an fsync of its own (WAL, `synchronous = NORMAL`):
   * it survives the process being killed at once, an OS crash or power cut only once the next
   * fsync (at most a second later) has run. A server keeps its own rules.
   */
  survives?: "power-loss" | "process-crash";
  /**
   * When the unit's first caller asked for it (`performance.now()`): an engine that bounds a
   * write counts its bound from there, so a unit that waited for another write (groupedWrites'
   * `oneAtATime`) answers within the same bound as one that did not.
   */
  askedAt?: number;
}

/**
 * How the SQL adapters reach their database: three verbs. Failures that mean "storage cannot
 * be used now" reject with `StorageUnavailableError` (a 503); a wrong statement rejects with
 * the driver's error.
 */
export interface SqlEngine {
  /** True when statements run in this process (a local file or `:memory:`): a small read costs microseconds, not a round trip. */
  readonly inProcess: boolean;
  /**
   * A read to answer from: its rows reflect every write acknowledged before the call, by this
   * process or another, and are on disk when it resolves. (A local file may make a commit
   * visible before its fsync is done; an answer built from such rows could show a client what
   * a power cut takes back: a pet listed, then gone, its id handed out again. So a local
   * engine resolves after the next fsync; elsewhere a commit is durable once visible.)
   */
  read(statement: Statement): Promise<Result>;
  /**
   * A read that only tells whether something changed (a version number): like `read`, but
   * it may show a commit not on disk yet, so it resolves without waiting for an fsync. Never
   * build an answer from its rows. Calls with the same statement may share one read while it
   * reflects every acknowledged write (a local engine shares one within a turn of the event
   * loop until its next write batch begins), so what every request asks costs one read per turn.
   */
  readVersion(statement: Statement): Promise<Result>;
  /**
   * Commits the unit's statements atomically (in one transaction) and resolves, with one result
   * per statement, once they are durable.
   */
  write(unit: Unit, options?: WriteOptions): Promise<Result[]>;
  /**
   * A failure no request meets, in a few words (a local file whose checkpoints fail while its
   * WAL grows, or that was removed while only counts were written); undefined when there is
   * none. Health checks report it.
   */
  problem?(): string | undefined;
}

/** The one row `sql` reads, as `as` makes it, if there is one (read the cheaper way a local database reads one row). */
export async function readOne<T>(
  db: SqlEngine,
  sql: string,
  args: Value[],
  as: (row: Row) => T,
): Promise<T | undefined> {
  const { rows } = await db.read({ sql, args, oneRow: true });
  return rows[0] && as(rows[0]);
}

/** The statements of a unit, made now if it is a function. */
export function statementsOf(unit: Unit): readonly Statement[] {
  return typeof unit === "function" ? unit() : unit;
}

/**
 * Runs `callback` once this turn of the event loop is over: `setImmediate` where the runtime
 * has it (Node, Bun and Deno), else a timer. Names no non-web global, as the adapters also
 * load on the edge.
 */
export const afterThisTurn: (callback: () => void) => void =
  (globalThis as { setImmediate?: (callback: () => void) => void }).setImmediate ??
  ((callback) => setTimeout(callback, 0));

/**
 * Named parameters as numbered ones: each `:name` in `sql` (a `::cast` is no name) becomes
 * `placeholder(n, name)`, `n` numbered from 1 in order of first use; `names` says which value
 * goes in which place. For engines that bind by number only (D1, Postgres), and statements
 * written with names for the reader but bound faster by number (the limiter's).
 */
export function numbered(
  sql: string,
  placeholder: (position: number, name: string) => string,
): { sql: string; names: string[] } {
  const names: string[] = [];
  const text = sql.replace(/(?<![:\w]):([a-zA-Z_]\w*)/g, (_, name: string) => {
    const index = names.includes(name) ? names.indexOf(name) : names.push(name) - 1;
    return placeholder(index + 1, name);
  });
  return { sql: text, names };
}

/** A statement written with named parameters and bound by number (see `numbered`), as a function of its values by name. */
export function boundByNumber<A>(
  named: string,
  placeholder: (position: number, name: string) => string,
  oneRow = false,
): (values: A) => Statement {
  const { sql, names } = numbered(named, placeholder);
  const argsOf = (values: A) => names.map((name) => values[name as keyof A] as Value);
  return oneRow
    ? (values) => ({ sql, args: argsOf(values), oneRow: true })
    : (values) => ({ sql, args: argsOf(values) });
}
