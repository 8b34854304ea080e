import { closeSync, fsync, openSync } from "node:fs";

/**
 * `fsync` of the database's WAL file on a worker thread. With it, a batch commits without
 * waiting for the disk (`synchronous = NORMAL`) and its acknowledged writes are answered once
 * the WAL has reached the disk: as durable as `FULL`, without stopping the event loop.
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

/**
 * The WAL file could not be opened (too many open files, removed): no fsync ran, so nothing is
 * known to be lost. Unlike a failed fsync, the next attempt may succeed and then covers
 * every page written before it.
 */
export class WalOpenError extends Error {
  constructor(cause: unknown) {
    super("The database's WAL file could not be opened for its fsync", { cause });
    this.name = "WalOpenError";
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already unusable; nothing to release.
  }
}

/**
 * fsync of a database's WAL file on a worker thread (see `WalSync`), through one descriptor
 * kept open (opening the file for each fsync cost more than the fsync).
 *
 * Only the WAL file is ever opened here, never the database file: POSIX advisory locks
 * belong to the process, and closing ANY descriptor of a file drops all of them ("How To
 * Corrupt An SQLite Database File", 2.2). Without its lock on the database file, the driver
 * looks absent to other processes: the next one to close the database thinks it was the last,
 * checkpoints and deletes the WAL this process still writes to. SQLite locks the database
 * and `-shm` files, never the WAL, so a descriptor of ours on the WAL releases nothing.
 *
 * For a database in WAL mode (the caller's to ensure); a new one has no WAL file before its
 * first commit, so the file is opened at the first fsync. Undefined when this process may not
 * open the WAL itself (under Deno the native addon opens the database outside the permission
 * sandbox, but this would need `--allow-read` and `--allow-write`): the commits then fsync on
 * the event loop, as durable and slower.
 */
export function walSyncOf(databasePath: string): WalSync | undefined {
  const wal = `${databasePath}-wal`;
  let fd: number | undefined;
  try {
    // Read and write, as SQLite opens it: Windows flushes only a writable handle. "r+" never
    // creates the file.
    fd = openSync(wal, "r+");
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ENOENT") return undefined;
  }
  /** The fsync running, if any: a descriptor is closed only once it is done with. */
  let running: Promise<void> = Promise.resolve();
  const retire = () => {
    const old = fd;
    fd = undefined;
    if (old !== undefined) void running.catch(() => {}).finally(() => closeQuietly(old));
  };
  return {
    sync() {
      running = new Promise<void>((resolve, reject) => {
        try {
          // After `reopen`, the WAL at the path is the one the new connection writes to.
          fd ??= openSync(wal, "r+");
        } catch (error) {
          reject(new WalOpenError(error));
          return;
        }
        fsync(fd, (error) => (error ? reject(error) : resolve()));
      });
      return running;
    },
    reopen: retire,
    close: retire,
  };
}
