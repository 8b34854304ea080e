import type NativeDatabase from "libsql";
import type { Result, SqlEngine, Statement } from "../../_sql/engine.js";
import { storageError } from "../_storage-errors.js";
import { LocalConnection } from "./_connection.js";
import type { FileIdentity } from "./_file-identity.js";
import { FsyncPolicy } from "./_fsync-policy.js";
import { GroupCommit } from "./_group-commit.js";
import { SharedVersionReads } from "./_shared-version-reads.js";
import type { WalSync } from "./_wal-sync.js";
import { WalWatch } from "./_wal-watch.js";

/** What a local database reports for metrics: batch sizes, commit and fsync times (ms). */
export interface StorageObserver {
  onBatch?(batch: { units: number; commitMs: number }): void;
  onFsync?(ms: number): void;
  /** A checkpoint of a WAL past `WAL_WATCH_BYTES` failed: the reason, with the WAL's size. */
  onCheckpointFailed?(reason: string): void;
}

export interface LocalEngineOptions {
  /**
   * A monotonic clock, ms (default `performance.now`): when the last fsync ran decides whether
   * a batch of counts gets one, so a wall clock stepped back must not put it off.
   */
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

/**
 * The adapters' engine on a local database (`connect` opens its native connection, at the
 * first statement and again after it was dropped), composed of one part per concern: writes
 * group-committed per turn of the event loop (`GroupCommit`), when commits reach the disk
 * (`FsyncPolicy`: a `survives: "process-crash"` unit needs no fsync of its own, one runs at
 * least once a second; with `walSync` the WAL is fsynced beside the event loop), the WAL's
 * size watched (`WalWatch`), and version reads shared within a turn (`SharedVersionReads`).
 */
export function localEngine(connect: () => NativeDatabase.Database, options: LocalEngineOptions = {}): LocalEngine {
  const clock = options.clock ?? (() => performance.now());
  const { walSync, files, observer, walPath } = options;
  const connection = new LocalConnection(connect, () => walSync?.reopen(), files, !options.inMemory);
  const fsync = new FsyncPolicy(clock, options.wal ?? true, walSync, observer?.onFsync?.bind(observer));
  const walWatch =
    walPath === undefined
      ? undefined
      : new WalWatch(walPath, connection, clock, observer?.onCheckpointFailed?.bind(observer));
  const execute = async (statement: Statement): Promise<Result> => {
    try {
      return connection.run(statement);
    } catch (error) {
      throw storageError(error);
    }
  };
  const versions = new SharedVersionReads(execute);
  const writes = new GroupCommit(connection, fsync, files, {
    begins: () => versions.batchBegins(),
    committed: (batch) => {
      observer?.onBatch?.(batch);
      walWatch?.committed();
    },
  });
  return {
    inProcess: true,
    // Answered once an fsync that began after it (so after every commit it saw) is done.
    async read(statement) {
      const result = await execute(statement);
      if (fsync.visibleBeforeDurable)
        await fsync.durable().catch((error: unknown) => Promise.reject(storageError(error)));
      return result;
    },
    readVersion: (statement) => versions.read(statement),
    write: (unit, writeOptions) => writes.write(unit, writeOptions),
    close() {
      connection.close();
      walSync?.close();
    },
    // Also a file removed or replaced while open, which batches of counts alone do not ask about.
    problem: () => walWatch?.problem ?? files?.changed(),
  };
}
