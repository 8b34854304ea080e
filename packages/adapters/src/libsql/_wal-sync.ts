import { open } from "node:fs/promises";
import type { WalSync } from "./_local-database.js";

/** One fsync of `path`, through a handle of its own (so a file replaced meanwhile is still the one synced). */
async function fsyncFile(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * fsync of a database's WAL file on a worker thread (see `WalSync`), or undefined when this
 * process cannot open that file itself: under Deno the native addon opens the database outside
 * the permission sandbox, but this would need `--allow-read`. The commits then fsync on the
 * event loop instead, as durable and slower.
 */
export async function walSyncOf(databasePath: string): Promise<WalSync | undefined> {
  const wal = `${databasePath}-wal`;
  try {
    await fsyncFile(wal);
  } catch {
    return undefined;
  }
  return { sync: () => fsyncFile(wal) };
}
