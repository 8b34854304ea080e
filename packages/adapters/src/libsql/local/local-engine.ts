import { statSync } from "node:fs";
import { StorageUnavailableError } from "@petstore/core";
import type NativeDatabase from "libsql";
import { afterThisTurn, type Result, type SqlEngine, type Statement, statementsOf, type Unit, type WriteOptions } from "../../_sql/engine.js";
import { storageError } from "../_storage-errors.js";
import { LocalConnection } from "./_connection.js";
import type { FileIdentity } from "./_file-identity.js";
import { WalDurability } from "./_wal-durability.js";
import type { WalSync } from "./_wal-sync.js";

/** A batch of writes that may skip its fsync still gets one if the last was longer ago than this. */
const MAX_UNSYNCED_MS = 1_000;
/**
 * A WAL larger than this is checkpointed by hand after a commit, at most every
 * `WAL_WATCH_EVERY_MS`, to learn whether checkpoints still succeed: SQLite's own, which run
 * after commits once the WAL holds 1000 pages (4 MB), fail silently, and a database file that
 * can no longer be written would let the WAL grow without bound, unnoticed.
 */
export const WAL_WATCH_BYTES = 64 * 1024 * 1024;
const WAL_WATCH_EVERY_MS = 10_000;

/** What a local database reports for metrics: batch sizes, commit and fsync times (ms). */
export interface StorageObserver {
  onBatch?(batch: { units: number; commitMs: number }): void;
  onFsync?(ms: number): void;
  /** A checkpoint of a WAL past `WAL_WATCH_BYTES` failed: the reason, with the WAL's size. */
  onCheckpointFailed?(reason: string): void;
}

export interface LocalEngineOptions {
  /** Unix ms; when the last fsync ran decides whether a batch of counts gets one. */
  clock?: () => number;
  /** Without it, a batch with an acknowledged write commits with `synchronous = FULL`. */
  walSync?: WalSync;
  /**
   * Checked after every commit that holds an acknowledged write (and by `problem`): such a
   * write into a file that is no longer at its path fails (a 503).
   */
  files?: FileIdentity;
  /**
   * False for a file SQLite could not put in WAL mode (a rollback journal): every batch then
   * commits with `synchronous = FULL`, since NORMAL there may corrupt the file on a power cut.
   * Default true.
   */
  wal?: boolean;
  /** An in-memory database: its one connection is kept whatever fails. */
  inMemory?: boolean;
  /** The WAL's path, for watching its size (stat only: the file is never opened here). */
  walPath?: string;
  /** Told of every committed batch and every WAL fsync, for metrics; must not throw. */
  observer?: StorageObserver;
}

/** The engine of a local database, which its opener closes. */
export interface LocalEngine extends SqlEngine {
  close(): void;
  /** Undefined while checkpoints succeed and the files are in place; else why not. */
  problem(): string | undefined;
}

/** What one caller of `write` asked for, and how to answer it once the batch has committed. */
interface Pending {
  unit: Unit;
  fsync: boolean;
  resolve: (results: Result[]) => void;
  reject: (error: unknown) => void;
}

/**
 * The adapters' engine on a local database (`connect` opens its native connection, at the
 * first statement and again after it was dropped). Writes are group-committed: every unit that
 * arrives within one turn of the event loop runs in ONE `BEGIN IMMEDIATE` ... `COMMIT`, so
 * concurrent requests share one fsync. Each unit stays atomic on its own (one statement, or a
 * SAVEPOINT around several) and fails alone; each caller's promise settles only after the
 * commit that made its unit durable. A unit written with `survives: "process-crash"` needs no
 * fsync of its own (in WAL mode the next fsync covers it), but one runs at least once a second.
 * With `walSync`, every batch commits with `synchronous = NORMAL` and the WAL is fsynced beside
 * the event loop (see `WalDurability`); without it, a batch with an acknowledged write commits
 * with `FULL`.
 */
export function localEngine(connect: () => NativeDatabase.Database, options: LocalEngineOptions = {}): LocalEngine {
  const clock = options.clock ?? Date.now;
  const { walSync, files, observer } = options;
  const walMode = options.wal ?? true;
  const wal = walSync && new WalDurability(walSync, clock, observer?.onFsync?.bind(observer));
  const connection = new LocalConnection(connect, () => walSync?.reopen(), files, !options.inMemory);
  let queue: Pending[] = [];
  /** Write batches begun: a read taken while this stays put has seen every commit of this process. */
  let batches = 0;
  /** The reads `readVersion` callers share, by statement: within this turn, while `batches` stays put. */
  const shared = new Map<string, { read: Promise<Result>; batches: number }>();
  /** When the last fsync of a commit on the event loop began (without `walSync`). */
  let syncedAt = 0;

  const lastSync = () => (wal ? wal.syncedAt : syncedAt);
  let watchedAt = Number.NEGATIVE_INFINITY;
  let checkpointProblem: string | undefined;

  /** After a commit, now and then: a WAL past the bound is checkpointed here, to see that it can be. */
  function watchWal(now: number): void {
    if (options.walPath === undefined || now - watchedAt < WAL_WATCH_EVERY_MS) return;
    watchedAt = now;
    let bytes: number;
    try {
      bytes = statSync(options.walPath).size;
    } catch {
      return;
    }
    if (bytes <= WAL_WATCH_BYTES) {
      checkpointProblem = undefined;
      return;
    }
    try {
      // PASSIVE: never waits for readers; an error means the database file takes no pages.
      connection.control("PRAGMA wal_checkpoint(PASSIVE)");
      checkpointProblem = undefined;
    } catch (error) {
      const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
      checkpointProblem = `checkpoints fail (${message}): the WAL holds ${(bytes / 1024 / 1024).toFixed(1)} MB not in the database file`;
      observer?.onCheckpointFailed?.(checkpointProblem);
    }
  }

  /** The unit's results, or the error that failed it alone; throws when the transaction is gone. */
  function runUnit(statements: readonly Statement[]): Result[] | { error: unknown } {
    const [only] = statements;
    if (statements.length === 1 && only !== undefined) {
      // One statement is atomic by itself: a failing one undoes only its own changes.
      try {
        return [connection.run(only)];
      } catch (error) {
        if (!connection.inTransaction) throw error;
        return { error };
      }
    }
    connection.control("SAVEPOINT unit");
    try {
      const results = statements.map((statement) => connection.run(statement));
      connection.control("RELEASE unit");
      return results;
    } catch (error) {
      // Errors like SQLITE_FULL or SQLITE_IOERR roll the whole transaction back.
      if (!connection.inTransaction) throw error;
      connection.control("ROLLBACK TO unit");
      connection.control("RELEASE unit");
      return { error };
    }
  }

  function flush(): void {
    const pending = queue;
    queue = [];
    batches++;
    const outcomes: (Result[] | { error: unknown })[] = [];
    const now = clock();
    const acknowledged = pending.some((each) => each.fsync);
    const due = acknowledged || now - lastSync() >= MAX_UNSYNCED_MS;
    // With walSync the fsync runs after the commit, beside the event loop.
    const fsyncHere = due && !wal;
    const began = performance.now();
    try {
      connection.synchronous(fsyncHere || !walMode ? "FULL" : "NORMAL");
      connection.control("BEGIN IMMEDIATE");
      for (const each of pending) {
        let statements: readonly Statement[];
        try {
          statements = statementsOf(each.unit);
        } catch (error) {
          outcomes.push({ error });
          continue;
        }
        outcomes.push(runUnit(statements));
      }
      connection.control("COMMIT");
      if (fsyncHere) syncedAt = now;
      // Committed, but into a file nobody will open again: not a write to acknowledge. Asked
      // (three stat calls) only when the batch holds one: counts alone are acknowledged as
      // nothing, and the next acknowledged write, or the health check's, finds the file gone.
      const moved = acknowledged ? files?.changed() : undefined;
      if (moved !== undefined) throw new StorageUnavailableError(moved);
      observer?.onBatch?.({ units: pending.length, commitMs: performance.now() - began });
      watchWal(now);
    } catch (error) {
      // Nothing of this batch was committed, or only into a removed file: every caller hears
      // the error (a 503 when the database is locked, full, unwritable or gone), none a result.
      connection.rollback();
      for (const each of pending) each.reject(storageError(error));
      return;
    }
    pending.forEach((each, i) => {
      const outcome = outcomes[i]!;
      if (!Array.isArray(outcome)) each.reject(storageError(outcome.error));
      else if (wal && each.fsync) wal.durable().then(() => each.resolve(outcome), (error: unknown) => each.reject(storageError(error)));
      else each.resolve(outcome);
    });
    // Counts only: an fsync once a second, which nobody waits for.
    if (wal && due && !acknowledged) wal.sync();
  }

  async function execute(statement: Statement): Promise<Result> {
    try {
      return connection.run(statement);
    } catch (error) {
      throw storageError(error);
    }
  }

  /**
   * Shared only while it still reflects every acknowledged write: a read runs at once (in
   * process), a batch commits and acknowledges within one task after it begins, so a write
   * of this process acknowledged after the read began a batch after it. Another process's
   * commit acknowledged before a call of this turn could only reach a client whose next
   * request arrives in a later turn: sharing never outlives the turn.
   */
  function readVersion(statement: Statement): Promise<Result> {
    const key = typeof statement === "string" ? statement : `${statement.sql}\n${JSON.stringify(statement.args ?? [])}`;
    const held = shared.get(key);
    if (held?.batches === batches) return held.read;
    if (shared.size === 0) afterThisTurn(() => shared.clear());
    const read = execute(statement);
    shared.set(key, { read, batches });
    return read;
  }

  /** `execute`, answered once an fsync that began after it (so after every commit it saw) is done. */
  async function read(statement: Statement): Promise<Result> {
    const result = await execute(statement);
    if (wal) await wal.durable().catch((error: unknown) => Promise.reject(storageError(error)));
    return result;
  }

  return {
    inProcess: true,
    read,
    readVersion,
    write: (unit: Unit, writeOptions?: WriteOptions) =>
      new Promise((resolve, reject) => {
        const fsync = writeOptions?.survives !== "process-crash";
        // setImmediate, not a microtask: the batch then holds every request this turn of the
        // event loop started, not only the one that opened it.
        if (queue.push({ unit, fsync, resolve, reject }) === 1) setImmediate(flush);
      }),
    close() {
      connection.close();
      walSync?.close();
    },
    // Also a file removed or replaced while open, which batches of counts alone do not ask about.
    problem: () => checkpointProblem ?? files?.changed(),
  };
}
