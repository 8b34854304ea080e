import { StorageUnavailableError } from "@petstore/core";
import {
  numbered,
  type Result,
  type Row,
  type SqlEngine,
  type Statement,
  statementsOf,
  type Value,
} from "../_sql/engine.js";
import { storageError } from "../libsql/_storage-errors.js";

/**
 * The part of a D1 binding (`env.DB`) the adapters use: Cloudflare's `D1Database`, or
 * miniflare's proxy of one. Written out here so that no Workers type package is needed.
 */
export interface D1Database {
  prepare(query: string): D1PreparedStatement;
  batch(statements: D1PreparedStatement[]): Promise<D1Result[]>;
}
interface D1PreparedStatement {
  bind(...values: Value[]): D1PreparedStatement;
  all(): Promise<D1Result>;
}
interface D1Result {
  results: unknown[];
  meta: { changes: number };
}

/**
 * D1's messages that mean "the database cannot be used right now" rather than "this statement
 * is wrong" (Cloudflare's list of D1 errors a client may retry).
 */
const UNAVAILABLE =
  /overloaded|network connection lost|storage operation exceeded|internal error|reset because|timed out|not available/i;

/**
 * `error` as the SQL adapters expect it: D1 reports SQLite's code only inside its message
 * (`D1_ERROR: UNIQUE constraint failed: ...: SQLITE_CONSTRAINT`), so it is copied to `code`,
 * where the adapters look (a duplicate key, a busy database); D1's own outages become a 503.
 */
function d1Error(error: unknown): unknown {
  const message = error instanceof Error ? error.message : String(error);
  if (UNAVAILABLE.test(message)) return new StorageUnavailableError(`D1 is unavailable (${message})`, { cause: error });
  const code = /SQLITE_[A-Z_]+/.exec(message)?.[0];
  return code === undefined
    ? error
    : storageError(Object.assign(new Error(message, { cause: error }), { code }), "migrateD1");
}

/**
 * The statement as D1 binds it: D1 takes `?` and `?NNN` but no named parameters, so each
 * `:name` becomes `?N`, numbered in order of first use.
 */
function positional(statement: Statement): { sql: string; args: Value[] } {
  if (typeof statement === "string") return { sql: statement, args: [] };
  const { sql, args = [] } = statement;
  if (Array.isArray(args)) return { sql, args };
  const { sql: text, names } = numbered(sql, (position) => `?${position}`);
  return {
    sql: text,
    args: names.map((name) => {
      if (!(name in args)) throw new Error(`statement: no value for :${name}`);
      return args[name]!;
    }),
  };
}

const toResult = (result: D1Result): Result => ({ rows: result.results as Row[], rowsAffected: result.meta.changes });

/**
 * The adapters' engine over a D1 binding. D1 has no interactive transactions; a `batch` runs
 * its statements in one, so a unit is one batch, made at once: no grouping across callers,
 * which also keeps every statement within D1's 100 bound values (a grouped insert of many
 * pets would pass that). A write is durable when D1 answers.
 */
export function d1Engine(db: D1Database): SqlEngine {
  if (typeof db?.prepare !== "function" || typeof db.batch !== "function")
    throw new TypeError("The D1 adapters need the D1 binding of your Worker, e.g. d1Adapters(env.DB)");
  async function guard<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw d1Error(error);
    }
  }
  const prepare = (statement: Statement) => {
    const { sql, args } = positional(statement);
    return db.prepare(sql).bind(...args);
  };
  const execute: SqlEngine["read"] = (statement) => guard(async () => toResult(await prepare(statement).all()));
  return {
    inProcess: false,
    read: execute,
    // A binding used without D1's Sessions API sends every query to the primary, which has
    // every acknowledged write.
    readVersion: execute,
    write: (unit) => guard(async () => (await db.batch(statementsOf(unit).map(prepare))).map(toResult)),
  };
}
