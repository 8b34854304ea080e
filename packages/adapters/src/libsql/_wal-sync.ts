import { closeSync, fsync, openSync } from "node:fs";
import type { WalSync } from "./_local-database.js";

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already unusable; nothing to release.
  }
}

/**
 * fsync of a database's WAL file on a worker thread (see `WalSync`), through one descriptor
 * kept open (opening the file for each fsync cost more than the fsync), or undefined when this
 * process cannot open the database's files itself: under Deno the native addon opens the
 * database outside the permission sandbox, but this would need `--allow-read` and
 * `--allow-write`. The commits then fsync on the event loop instead, as durable and slower.
 * The WAL file is opened at the first fsync: a new database has none until its first commit.
 */
export function walSyncOf(databasePath: string): WalSync | undefined {
  const wal = `${databasePath}-wal`;
  try {
    // Read and write, as the WAL will be opened: Windows flushes only a writable handle.
    closeSync(openSync(databasePath, "r+"));
  } catch {
    return undefined;
  }
  let fd: number | undefined;
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
        fd ??= openSync(wal, "r+");
        fsync(fd, (error) => (error ? reject(error) : resolve()));
      });
      return running;
    },
    reopen: retire,
    close: retire,
  };
}
