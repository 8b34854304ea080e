import { closeSync, fsync, openSync } from "node:fs";
import type { WalSync } from "./_local-database.js";

/**
 * fsync of a database's WAL file on a worker thread (see `WalSync`), through one descriptor
 * kept open (opening the file for each fsync cost more than the fsync), or undefined when this
 * process cannot open that file itself: under Deno the native addon opens the database outside
 * the permission sandbox, but this would need `--allow-read`. The commits then fsync on the
 * event loop instead, as durable and slower.
 */
export function walSyncOf(databasePath: string): WalSync | undefined {
  const wal = `${databasePath}-wal`;
  let fd: number | undefined;
  /** The fsync running, if any: a descriptor is closed only once it is done with. */
  let running: Promise<void> = Promise.resolve();
  const descriptor = () => (fd ??= openSync(wal, "r"));
  try {
    descriptor();
  } catch {
    return undefined;
  }
  return {
    sync() {
      running = new Promise<void>((resolve, reject) => {
        fsync(descriptor(), (error) => (error ? reject(error) : resolve()));
      });
      return running;
    },
    reopen() {
      const old = fd;
      fd = undefined;
      if (old === undefined) return;
      void running
        .catch(() => {})
        .finally(() => {
          try {
            closeSync(old);
          } catch {
            // Already unusable; nothing to release.
          }
        });
    },
  };
}
