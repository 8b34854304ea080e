import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, linkSync, openSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import NativeDatabase from "libsql";
import { UsageError } from "../usage-error.js";
import type { Command } from "./_command.js";
import { POSTGRES_URL } from "../open-storage.js";
import { dbConfig } from "./_options.js";

/** How long the snapshot waits for a lock another process holds (as the servers do). */
const BUSY_TIMEOUT_MS = 5_000;

/** What a backup holds, as printed. */
interface BackupSummary {
  out: string;
  pets: number;
  orders: number;
  keys: number;
  bytes: number;
  integrity: "ok";
}

/** The file a `file:` URL names, resolved the way the driver resolves it (query dropped). */
function localPath(url: string): string {
  const withoutQuery = url.replace(/[?#].*$/, "");
  return resolve(withoutQuery.startsWith("file://") ? fileURLToPath(withoutQuery) : decodeURIComponent(withoutQuery.slice("file:".length)));
}

/** Why a path cannot be used, in a few words, from a `node:fs` error. */
function reason(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === "SQLITE_FULL" || code === "ENOSPC" || /database or disk is full/.test(message)) return "the disk is full";
  if (code === "EROFS" || /readonly|read-only/i.test(message)) return "the file system is read-only";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  return message.split("\n")[0]!;
}

/** fsync by path: of the finished copy, then of its directory (so the new name survives a power cut). */
function syncPath(path: string, flags: "r" | "r+"): void {
  const fd = openSync(path, flags);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** One statement's single number. */
function count(db: NativeDatabase.Database, table: string): number {
  return Number((db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
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
  const temp = join(dirname(out), `.${basename(out)}.${process.pid}-${randomBytes(4).toString("hex")}.partial`);
  const removeTemp = () => {
    for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(`${temp}${suffix}`, { force: true });
  };
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
      const [result] = copy.prepare("PRAGMA integrity_check").raw(true).all() as string[][];
      if (result?.[0] !== "ok") throw new Error(`the copy fails PRAGMA integrity_check: ${result?.[0] ?? "no answer"}`);
      summary = { pets: count(copy, "pets"), orders: count(copy, "orders"), keys: count(copy, "api_keys"), integrity: "ok" };
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
    return { out, pets: summary.pets, orders: summary.orders, keys: summary.keys, bytes: statSync(out).size, integrity: summary.integrity };
  } catch (error) {
    removeTemp();
    if ((error as { code?: unknown }).code === "EEXIST") throw new Error(`${out} already exists (--force replaces it)`);
    throw new Error(`cannot back up to ${out}: ${reason(error)}`);
  }
}

/** `petstore backup`: an online, consistent, checked copy of a local database file. */
/** `1 pet`, `2 pets`. */
const counted = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

export const backupCommand: Command = {
  spec: { name: "backup", flags: { db: "value", out: "value", force: "switch", json: "switch" }, positionals: [] },
  usage: "petstore backup --db file:PATH --out FILE [--force] [--json]",
  help: `Copies a local database while servers keep using it (SQLite's VACUUM INTO: one consistent
snapshot; servers are not stopped or blocked), checks the copy with PRAGMA integrity_check and
prints what it holds. The copy is written under a temporary name beside FILE and renamed when
complete: FILE is never a partial copy. Restore: stop the servers, replace the database file
with the copy, delete the database's -wal and -shm files, start the servers.

  --db URL     the database: file:PATH (default file:petstore.db; env PETSTORE_DB)
  --out FILE   where the copy goes; its directory must exist
  --force      replace FILE if it exists (default: refuse)
  --json       print one JSON object: out, pets, orders, keys, bytes, integrity`,
  run: async (args, env, io) => {
    const out = args.values.out;
    if (out === undefined || out === "") throw new UsageError("--out is required: the file the copy is written to");
    const { url } = dbConfig(args, env);
    if (POSTGRES_URL.test(url)) {
      io.err("petstore: backup copies a local database file; for Postgres use pg_dump (e.g. pg_dump --format=custom --file=petstore.dump DATABASE_URL)");
      return 1;
    }
    if (!url.startsWith("file:") || url.startsWith("file::memory:")) {
      io.err(`petstore: backup copies a local database file (file:PATH), not ${url.startsWith("file:") || url === ":memory:" ? url : "a remote server"}; a libSQL server or Turso keeps its own backups`);
      return 1;
    }
    const source = localPath(url);
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
    if (sameFile(source, destination) || [`${source}-wal`, `${source}-shm`].includes(destination)) {
      io.err(`petstore: --out ${destination} is the database itself (or one of its files): write the copy elsewhere`);
      return 1;
    }
    if (!args.switches.has("force") && exists(destination)) {
      io.err(`petstore: ${destination} already exists (--force replaces it)`);
      return 1;
    }
    const summary = snapshot(source, destination, args.switches.has("force"));
    if (args.switches.has("json")) io.out(JSON.stringify(summary));
    else {
      io.out(`Backed up ${source} to ${summary.out}: ${counted(summary.pets, "pet")}, ${counted(summary.orders, "order")}, ${counted(summary.keys, "API key")}, ${summary.bytes} bytes; integrity check ok.`);
    }
    return 0;
  },
};

/** Both paths name one file (also through a link): compared by stat, never by opening. */
function sameFile(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    const [first, second] = [statSync(a), statSync(b)];
    return first.dev === second.dev && first.ino === second.ino;
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
