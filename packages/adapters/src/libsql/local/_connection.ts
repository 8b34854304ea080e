import { StorageUnavailableError } from "@petstore/core";
import type NativeDatabase from "libsql";
import type { Result, Row, Statement } from "../../_sql/engine.js";
import { sqliteCode } from "../_storage-errors.js";
import type { FileIdentity } from "./_file-identity.js";

type Native = NativeDatabase.Database;
/** `columns` names a reader's columns: it returns rows as arrays, made objects here. */
type Prepared = { statement: NativeDatabase.Statement; columns: string[] | undefined };

/** The adapters' statements, plus the few the group commit runs: far below this. */
const MAX_PREPARED = 200;

/**
 * One native connection of the `libsql` package, opened on first use and again after it was
 * dropped, with each statement prepared once per connection and reused (`@libsql/client`
 * prepares it again on every `execute`, which costs more than running it).
 */
export class LocalConnection {
  #connection: Native | undefined;
  #prepared = new Map<string, Prepared>();
  #closed = false;
  /** A statement met SQLITE_READONLY inside a transaction: the connection is replaced once it ends. */
  #stale = false;
  /** The connection's `synchronous` setting, once set. */
  #synchronous: "FULL" | "NORMAL" | undefined;

  constructor(
    private readonly connect: () => Native,
    /** Told whenever a new connection was opened (the WAL file may be a new one). */
    private readonly onOpen: () => void,
    private readonly files: FileIdentity | undefined,
    /** False for an in-memory database, which a new connection would not find again. */
    private readonly reopenable = true,
  ) {}

  get inTransaction(): boolean {
    return this.#connection?.open === true && this.#connection.inTransaction;
  }

  open(): Native {
    if (this.#closed) throw new StorageUnavailableError("the database connection is closed");
    if (this.#stale && !this.inTransaction) this.drop();
    if (!this.#connection?.open) {
      // A new connection to a path whose file was removed would make an empty database there.
      const moved = this.files?.reopening();
      if (moved !== undefined) throw new StorageUnavailableError(moved);
      this.#connection = this.connect();
      this.files?.opened();
      this.#prepared = new Map();
      this.#synchronous = undefined;
      this.onOpen();
    }
    return this.#connection;
  }

  /**
   * Closes the connection; the next statement opens a new one: after SQLITE_BUSY (a statement
   * left unfinished would make every later COMMIT fail) and after SQLITE_READONLY (a
   * connection opened while the file was read-only stays read-only after it becomes writable).
   */
  drop(): void {
    if (this.reopenable) this.#close();
  }

  /**
   * Closes for good, first moving the WAL into the database file (`TRUNCATE` also empties the
   * WAL), so that after a clean shutdown the database file alone holds every commit, for an
   * operator who copies it. SQLite would do this itself when the last connection closes, but
   * the driver closes a connection only once its prepared statements are collected, and the
   * process exits before that. While another connection reads, the checkpoint cannot finish
   * (SQLite reports it busy, after the busy timeout): that connection is not done with the WAL.
   */
  close(): void {
    if (this.#connection?.open && !this.#connection.inTransaction) {
      try {
        this.#connection.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch {
        // Closing goes on: the WAL keeps the commits, and the next connection reads them.
      }
    }
    this.#closed = true;
    this.#close();
  }

  #close(): void {
    if (this.#connection?.open) this.#connection.close();
    this.#connection = undefined;
    this.#stale = false;
    // A statement keeps its connection alive: drop them, so that the next one is prepared anew.
    this.#prepared = new Map();
  }

  /**
   * After a failed statement: the connection is replaced after BUSY, LOCKED or READONLY (at
   * once outside a transaction; within ours, which holds the write lock, only READONLY can
   * occur, and the connection is replaced once the transaction ended).
   */
  #failed(error: unknown): void {
    if (!/^SQLITE_(BUSY|LOCKED|READONLY)/.test(sqliteCode(error))) return;
    if (this.inTransaction) this.#stale = true;
    else this.drop();
  }

  /**
   * Transaction control and PRAGMAs, compiled each time: the package does not reset a
   * statement that failed, and a BEGIN left unfinished by SQLITE_BUSY would make every later
   * COMMIT fail.
   */
  control(sql: string): void {
    try {
      this.open().exec(sql);
    } catch (error) {
      this.#failed(error);
      throw error;
    }
  }

  /** Sets `synchronous` unless it already is (a PRAGMA per batch would cost more than the batch). */
  synchronous(wanted: "FULL" | "NORMAL"): void {
    if (this.#synchronous === wanted) return;
    this.control(`PRAGMA synchronous = ${wanted}`);
    this.#synchronous = wanted;
  }

  run(statement: Statement): Result {
    try {
      return this.#runPrepared(statement);
    } catch (error) {
      // The package does not reset a statement that failed: reused, it would fail again.
      this.#prepared.delete(typeof statement === "string" ? statement : statement.sql);
      this.#failed(error);
      throw error;
    }
  }

  /** Undoes the open transaction, if any; an unusable connection is left for the next statement to report. */
  rollback(): void {
    try {
      if (this.inTransaction) this.#connection!.exec("ROLLBACK");
    } catch {
      // Reported to the next caller.
    }
  }

  #runPrepared(statement: Statement): Result {
    const sql = typeof statement === "string" ? statement : statement.sql;
    let entry = this.#prepared.get(sql);
    if (!entry) {
      if (this.#prepared.size >= MAX_PREPARED) this.#prepared.clear();
      const native = this.open().prepare(sql);
      // Rows as arrays: the package builds an object per row one native call per column.
      const columns = native.reader
        ? native
            .raw(true)
            .columns()
            .map((column) => column.name)
        : undefined;
      entry = { statement: native, columns };
      this.#prepared.set(sql, entry);
    }
    const args = typeof statement === "string" ? [] : (statement.args ?? []);
    const columns = entry.columns;
    if (columns === undefined) return { rows: [], rowsAffected: entry.statement.run(args).changes };
    const toRow = (values: unknown[]): Row => {
      const row: Row = {};
      for (let i = 0; i < columns.length; i++) row[columns[i]!] = values[i];
      return row;
    };
    // Every reader (also `INSERT ... RETURNING`) through `get` or `all`, which finish it: `run`
    // would leave it unfinished, and an unfinished statement makes the COMMIT fail. `get` costs
    // a third of `all` for a statement like the limiter's.
    if (typeof statement !== "string" && statement.oneRow) {
      const values = entry.statement.get(args) as unknown[] | undefined;
      return { rows: values === undefined ? [] : [toRow(values)], rowsAffected: 0 };
    }
    return { rows: (entry.statement.all(args) as unknown[][]).map(toRow), rowsAffected: 0 };
  }
}
