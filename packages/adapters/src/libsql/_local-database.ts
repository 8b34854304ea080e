import { StorageUnavailableError } from "@petstore/core";
import type NativeDatabase from "libsql";
import type { FileIdentity } from "./_file-identity.js";
import type { Database, Result, Row, Statement, WriteOptions } from "./_database.js";

type Connection = NativeDatabase.Database;
/** `columns` names a reader's columns: it returns rows as arrays, made objects here. */
type Prepared = { statement: NativeDatabase.Statement; columns: string[] | undefined };

/** The adapters' statements, plus the few the group commit runs: far below this. */
const MAX_PREPARED = 200;
/** A batch of writes that may skip its fsync still gets one if the last was longer ago than this. */
const MAX_UNSYNCED_MS = 1_000;

/** What one caller of `write` asked for, and how to answer it once the batch has committed. */
interface Unit {
  statements: readonly Statement[];
  fsync: boolean;
  resolve: (results: Result[]) => void;
  reject: (error: unknown) => void;
}

/**
 * `fsync` of the database's WAL file on a worker thread. With it, a batch commits without
 * waiting for the disk (`synchronous = NORMAL`) and its acknowledged writes are answered once
 * the WAL has reached the disk: as durable as `FULL`, without stopping the event loop. A
 * commit is then visible before it is durable, so whatever answers with what it read waits
 * for `durable()` first (see `Database.durable`).
 */
export interface WalSync {
  sync(): Promise<void>;
  /**
   * Called when the connection is (re)opened: the WAL file may have been replaced while this
   * process had no connection (SQLite deletes it when the last connection closes).
   */
  reopen(): void;
  close(): void;
}

export interface LocalDatabaseOptions {
  /** Unix ms; when the last fsync ran decides whether a batch of counts gets one. */
  clock?: () => number;
  /** Without it, a batch with an acknowledged write commits with `synchronous = FULL`. */
  walSync?: WalSync;
  /** Checked after every commit: a write into a file that is no longer at its path fails (a 503). */
  files?: FileIdentity;
  /** Told of every committed batch and every WAL fsync, for metrics; must not throw. */
  observer?: StorageObserver;
}

/** What a local database reports for metrics: batch sizes, commit and fsync times (ms). */
export interface StorageObserver {
  onBatch?(batch: { units: number; commitMs: number }): void;
  onFsync?(ms: number): void;
}

/** An error shaped like SQLite's, so that it becomes a 503 like a failed commit. */
function fsyncError(cause: unknown): Error {
  return Object.assign(new Error("The database's log could not be written to disk", { cause }), { code: "SQLITE_IOERR_FSYNC" });
}

/** The adapters' database calls on a local connection of the `libsql` package (synchronous). */
export interface LocalDatabase extends Omit<Database, "inProcess" | "batches" | "durable"> {
  /** Settles once everything committed before the call is on disk (see `WalSync`). */
  durable(): Promise<void>;
  /** How many write batches have begun (each commits at once, synchronously). */
  batches(): number;
  /**
   * Closes the connection; the next statement opens a new one (a connection opened while the
   * file was read-only stays read-only after it becomes writable).
   */
  reopen(): void;
  close(): void;
}

/** An error shaped like `@libsql/client`'s, so that `database()` maps it like the client's. */
function closedError(): Error {
  return Object.assign(new Error("The client is closed"), { code: "CLIENT_CLOSED" });
}

/**
 * A local database for the adapters: each statement is prepared once per connection and reused
 * (`@libsql/client` prepares it again on every `execute`, which costs more than running it),
 * and writes are group-committed: every unit that arrives within one turn of the event loop
 * runs in ONE `BEGIN IMMEDIATE` ... `COMMIT`, so concurrent requests share one fsync. Each unit
 * stays atomic on its own (one statement, or a SAVEPOINT around several) and fails alone; each
 * caller's promise settles only after the commit that made its unit durable. A unit that said
 * `survives: "process-crash"` needs no fsync of its own (in WAL mode the next fsync covers it),
 * but one runs at least once a second. With `walSync`, every batch commits with `synchronous =
 * NORMAL` and the fsync runs beside the event loop: acknowledged writes are answered after the
 * first fsync that began after their commit (one fsync serves every batch committed while the
 * previous one ran). Without it, a batch with an acknowledged write commits with `FULL`.
 * `connect` opens (or finds) the connection, at the first statement and again after `reopen`.
 */
export function localDatabase(connect: () => Connection, options: LocalDatabaseOptions = {}): LocalDatabase {
  const clock = options.clock ?? Date.now;
  const walSync = options.walSync;
  const files = options.files;
  let connection: Connection | undefined;
  let prepared = new Map<string, Prepared>();
  let queue: Unit[] = [];
  let closed = false;
  /** The connection's `synchronous` setting, once set; and when a commit last fsynced. */
  let synchronous: "FULL" | "NORMAL" | undefined;
  let syncedAt = 0;
  let batches = 0;
  /** With `walSync`: whether an fsync is running, and who waits for the next one. */
  let syncing = false;
  let awaitingSync: ((error?: unknown) => void)[] = [];
  /**
   * The first fsync failure, kept: after one, Linux may have dropped the unwritten pages and a
   * later fsync can succeed without them, so no later write or read can be vouched for either.
   * Every durable answer fails (a 503) until the process restarts.
   */
  let syncFailure: Error | undefined;

  /** Starts an fsync for everyone waiting, unless one is running: they then get the next. */
  function startSync(): void {
    if (syncing || !walSync) return;
    syncing = true;
    const waiting = awaitingSync;
    awaitingSync = [];
    const started = clock();
    const began = performance.now();
    walSync.sync().then(
      () => {
        syncedAt = started;
        options.observer?.onFsync?.(performance.now() - began);
        for (const settle of waiting) settle(syncFailure);
      },
      (error: unknown) => {
        syncFailure ??= fsyncError(error);
        for (const settle of waiting) settle(syncFailure);
      },
    ).finally(() => {
      syncing = false;
      if (awaitingSync.length > 0) startSync();
    });
  }

  /** Settles once an fsync that began after this call is done (at once without `walSync`). */
  function durable(): Promise<void> {
    if (!walSync) return Promise.resolve();
    if (syncFailure) return Promise.reject(syncFailure);
    return new Promise((resolve, reject) => {
      awaitingSync.push((error) => (error === undefined ? resolve() : reject(error)));
      startSync();
    });
  }

  function open(): Connection {
    if (closed) throw closedError();
    if (!connection?.open) {
      const moved = files?.reopening();
      if (moved !== undefined) throw new StorageUnavailableError(moved);
      connection = connect();
      walSync?.reopen();
      prepared = new Map();
      synchronous = undefined;
    }
    return connection;
  }

  function disconnect(): void {
    if (connection?.open) connection.close();
    connection = undefined;
    // A statement keeps its connection alive: drop them, so that the next one is prepared anew.
    prepared = new Map();
  }

  /**
   * Transaction control, compiled each time: the package does not reset a statement that
   * failed, and a BEGIN left unfinished by SQLITE_BUSY would make every later COMMIT fail.
   */
  function control(sql: string): void {
    open().exec(sql);
  }

  function run(statement: Statement): Result {
    try {
      return runPrepared(statement);
    } catch (error) {
      // The package does not reset a statement that failed: reused, it would fail again, and
      // one left unfinished by SQLITE_BUSY or SQLITE_LOCKED would make every later COMMIT
      // fail. So it is dropped, and in that case its connection too (outside a transaction;
      // within ours, which holds the write lock, a statement cannot meet a lock).
      prepared.delete(typeof statement === "string" ? statement : statement.sql);
      const code = String((error as { code?: unknown }).code);
      if (/^SQLITE_(BUSY|LOCKED)/.test(code) && !connection?.inTransaction) disconnect();
      throw error;
    }
  }

  function runPrepared(statement: Statement): Result {
    const sql = typeof statement === "string" ? statement : statement.sql;
    let entry = prepared.get(sql);
    if (!entry) {
      if (prepared.size >= MAX_PREPARED) prepared.clear();
      const native = open().prepare(sql);
      // Rows as arrays: the package builds an object per row one native call per column.
      const columns = native.reader ? native.raw(true).columns().map((column) => column.name) : undefined;
      entry = { statement: native, columns };
      prepared.set(sql, entry);
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

  /** The unit's results, or the error that failed it alone; throws when the transaction is gone. */
  function runUnit(db: Connection, unit: Unit): Result[] | { error: unknown } {
    const [only] = unit.statements;
    if (unit.statements.length === 1 && only !== undefined) {
      // One statement is atomic by itself: a failing one undoes only its own changes.
      try {
        return [run(only)];
      } catch (error) {
        if (!db.inTransaction) throw error;
        return { error };
      }
    }
    control("SAVEPOINT unit");
    try {
      const results = unit.statements.map(run);
      control("RELEASE unit");
      return results;
    } catch (error) {
      // Errors like SQLITE_FULL or SQLITE_IOERR roll the whole transaction back.
      if (!db.inTransaction) throw error;
      control("ROLLBACK TO unit");
      control("RELEASE unit");
      return { error };
    }
  }

  function rollback(): void {
    try {
      if (connection?.open && connection.inTransaction) connection.exec("ROLLBACK");
    } catch {
      // The connection is unusable: the next statement reports that to its caller.
    }
  }

  function flush(): void {
    const units = queue;
    queue = [];
    batches++;
    const outcomes: (Result[] | { error: unknown })[] = [];
    const now = clock();
    const due = units.some((unit) => unit.fsync) || now - syncedAt >= MAX_UNSYNCED_MS;
    // With walSync the fsync runs after the commit, beside the event loop.
    const fsync = due && !walSync;
    const began = performance.now();
    try {
      const db = open();
      const wanted = fsync ? "FULL" : "NORMAL";
      if (synchronous !== wanted) {
        control(`PRAGMA synchronous = ${wanted}`);
        synchronous = wanted;
      }
      control("BEGIN IMMEDIATE");
      for (const unit of units) outcomes.push(runUnit(db, unit));
      control("COMMIT");
      if (fsync) syncedAt = now;
      // Committed, but into a file nobody will open again: not a write to acknowledge.
      const moved = files?.changed();
      if (moved !== undefined) throw new StorageUnavailableError(moved);
      options.observer?.onBatch?.({ units: units.length, commitMs: performance.now() - began });
    } catch (error) {
      // Nothing of this batch was committed, or only into a removed file: every caller hears
      // the error (a 503 when the database is locked, full, unwritable or gone), none a result.
      rollback();
      for (const unit of units) unit.reject(error);
      return;
    }
    units.forEach((unit, i) => {
      const outcome = outcomes[i]!;
      if (!Array.isArray(outcome)) unit.reject(outcome.error);
      else if (walSync && unit.fsync) durable().then(() => unit.resolve(outcome), unit.reject);
      else unit.resolve(outcome);
    });
    // Counts only: an fsync once a second, which nobody waits for.
    if (walSync && due && !units.some((unit) => unit.fsync)) startSync();
  }

  return {
    execute: async (statement) => run(statement),
    write: (statements, options?: WriteOptions) =>
      new Promise((resolve, reject) => {
        const fsync = options?.survives !== "process-crash";
        // setImmediate, not a microtask: the batch then holds every request this turn of the
        // event loop started, not only the one that opened it.
        if (queue.push({ statements, fsync, resolve, reject }) === 1) setImmediate(flush);
      }),
    batches: () => batches,
    reopen: disconnect,
    durable,
    close() {
      closed = true;
      disconnect();
      walSync?.close();
    },
  };
}
