import { linkSync, realpathSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import NativeDatabase from "libsql";
import { UsageError } from "../cli/usage-error.js";
import type { Command } from "./_command.js";
import { POSTGRES_URL } from "../storage/open-storage.js";
import { dbConfig } from "./_options.js";
import {
  checkedContents,
  copyBeside,
  type DatabaseContents,
  describedContents,
  exists,
  localPath,
  reason,
  sameFile,
  syncPath,
} from "./_database-file.js";

/** How long the snapshot waits for a lock another process holds (as the servers do). */
const BUSY_TIMEOUT_MS = 5_000;

/** What a backup holds, as printed. */
interface BackupSummary extends DatabaseContents {
  out: string;
  bytes: number;
  integrity: "ok";
}

/**
 * Snapshots `source` into `out` with SQLite's `VACUUM INTO` on a connection of the same
 * driver the servers use: one read transaction, so the copy is consistent while servers keep
 * writing (WAL: they are not blocked). The copy is written to a temporary name in the
 * destination directory, checked, fsynced, then given its name in one step, so no partial
 * file ever has the destination's name. The source is only ever touched through SQLite: a
 * descriptor of it opened and closed here would drop the process's POSIX locks on it
 * (SQLite's "How To Corrupt An SQLite Database File", 2.2).
 */
function snapshot(source: string, out: string, force: boolean): BackupSummary {
  const copy = copyBeside(out, "partial");
  const temp = copy.path;
  try {
    const live = new NativeDatabase(source, { timeout: BUSY_TIMEOUT_MS });
    try {
      live.prepare("VACUUM INTO ?").run([temp]);
    } finally {
      live.close();
    }
    const copy = new NativeDatabase(temp, { timeout: BUSY_TIMEOUT_MS });
    let summary: Omit<BackupSummary, "out" | "bytes">;
    try {
      summary = { ...checkedContents(copy, "the copy"), integrity: "ok" };
    } finally {
      copy.close();
    }
    syncPath(temp, "r+");
    if (force) renameSync(temp, out);
    else {
      // A hard link never replaces an existing file: refusing to overwrite cannot race.
      linkSync(temp, out);
      rmSync(temp);
    }
    syncPath(dirname(out), "r");
    return {
      out,
      pets: summary.pets,
      orders: summary.orders,
      keys: summary.keys,
      bytes: statSync(out).size,
      integrity: summary.integrity,
    };
  } catch (error) {
    copy.remove();
    if ((error as { code?: unknown }).code === "EEXIST") throw new Error(`${out} already exists (--force replaces it)`);
    throw new Error(`cannot back up to ${out}: ${reason(error)}`);
  }
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

export const backupCommand: Command = {
  spec: { name: "backup", flags: { db: "value", out: "value", force: "switch", json: "switch" }, positionals: [] },
  usage: "petstore backup --out FILE [--db file:PATH] [--force] [--json]",
  help: `Copies a local database while servers keep using it (SQLite's VACUUM INTO: one consistent
snapshot; servers are not stopped or blocked), checks the copy with PRAGMA integrity_check and
prints what it holds. The copy is written under a temporary name beside FILE and renamed when
complete: FILE is never a partial copy, and copies a killed backup left behind are removed by
the next one. Restore with 'petstore restore --from FILE' (stop the servers first).

  --db URL     the database: file:PATH (default file:petstore.db; env PETSTORE_DB)
  --out FILE   where the copy goes; its directory must exist
  --force      replace FILE if it exists (default: refuse)
  --json       print one JSON object: out, pets, orders, keys, bytes, integrity`,
  run: async (args, env, io) => {
    const out = args.values.out;
    if (out === undefined || out === "") throw new UsageError("--out is required: the file the copy is written to");
    const { url } = dbConfig(args, env);
    if (POSTGRES_URL.test(url)) {
      io.err(
        "petstore: backup copies a local database file; for Postgres use pg_dump (e.g. pg_dump --format=custom --file=petstore.dump DATABASE_URL)",
      );
      return 1;
    }
    const source = localPath(url);
    if (source === undefined) {
      io.err(
        `petstore: backup copies a local database file (file:PATH), not ${url.startsWith("file:") || url === ":memory:" ? url : "a remote server"}; a libSQL server or Turso keeps its own backups`,
      );
      return 1;
    }
    // stat, never open: see `snapshot`. SQLite would create a missing file, which is no backup.
    const found = (() => {
      try {
        return statSync(source).isFile();
      } catch {
        return false;
      }
    })();
    if (!found) {
      io.err(`petstore: no database at ${source}`);
      return 1;
    }
    const destination = resolve(out);
    // Through links too: the names SQLite gives the database's own files, from the real directory.
    const real = (path: string) => join(realpathOr(dirname(path)), basename(path));
    const own = ["", "-wal", "-shm", "-journal"].map((suffix) => `${real(source)}${suffix}`);
    if (
      sameFile(source, destination) ||
      own.includes(real(destination)) ||
      own.slice(1).some((file) => sameFile(file, destination))
    ) {
      io.err(`petstore: --out ${destination} is the database itself (or one of its files): write the copy elsewhere`);
      return 1;
    }
    if (!exists(dirname(destination))) {
      io.err(
        `petstore: the directory ${dirname(destination)} does not exist: create it first (mkdir -p ${dirname(destination)})`,
      );
      return 1;
    }
    if (exists(`${destination}-wal`) || exists(`${destination}-shm`)) {
      io.err(
        `petstore: ${destination} is a database in use (it has a -wal or -shm file beside it); to put a backup in a database's place use '${io.program} restore --from BACKUP --db file:${destination}'`,
      );
      return 1;
    }
    if (!args.switches.has("force") && exists(destination)) {
      io.err(`petstore: ${destination} already exists (--force replaces it)`);
      return 1;
    }
    const summary = snapshot(source, destination, args.switches.has("force"));
    if (args.switches.has("json")) io.out(JSON.stringify(summary));
    else {
      io.out(
        `Backed up ${source} to ${summary.out}: ${describedContents(summary)}, ${summary.bytes} bytes; integrity check ok.`,
      );
    }
    return 0;
  },
};
