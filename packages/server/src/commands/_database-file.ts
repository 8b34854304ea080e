import { firstLine } from "../messages/first-line.js";
import { closeSync, fsyncSync, openSync, readdirSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { type DatabaseLocation, databaseLocation } from "@petstore/adapters/libsql/connect";
import { shownUrl } from "../messages/shown-url.js";
import type NativeDatabase from "libsql";
import { type DbConfig, openStorage, type Storage } from "../storage/open-storage.js";
import { UsageError } from "../cli/usage-error.js";
import type { Io } from "./_command.js";

/**
 * Files of a local database, for the commands that copy one (`backup`, `restore`). The
 * database itself is only ever opened through SQLite: a descriptor of it opened and closed
 * beside the driver would drop the process's POSIX locks on it (SQLite's "How To Corrupt An
 * SQLite Database File", 2.2), so these stat it, never open it.
 */

/**
 * The absolute path of the file a `file:` URL names, read as `connectLibsql` reads it;
 * undefined for an in-memory database or a server.
 */
export function localPath(url: string): string | undefined {
  let location: DatabaseLocation;
  try {
    location = databaseLocation(url);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return location.kind === "file" ? resolve(location.path) : undefined;
}

/** Why a path cannot be used, in a few words, from a `node:fs` error. */
export function reason(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = firstLine(error);
  if (code === "SQLITE_FULL" || code === "ENOSPC" || /database or disk is full/.test(message))
    return "the disk is full";
  if (code === "EROFS" || /readonly|read-only/i.test(message)) return "the file system is read-only";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  return message;
}

/** fsync by path: of the finished copy, then of its directory (so the new name survives a power cut). */
export function syncPath(path: string, flags: "r" | "r+"): void {
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

/** What a Pet Store database file holds, as `backup` and `restore` print it. */
export interface DatabaseContents {
  pets: number;
  orders: number;
  keys: number;
}

/**
 * Checks a database file whole (PRAGMA integrity_check) and a Pet Store one, and counts what it
 * holds; `name` is how the errors call it.
 */
export function checkedContents(db: NativeDatabase.Database, name: string): DatabaseContents {
  const [result] = db.prepare("PRAGMA integrity_check").raw(true).all() as string[][];
  if (result?.[0] !== "ok") throw new Error(`${name} fails PRAGMA integrity_check: ${result?.[0] ?? "no answer"}`);
  try {
    return { pets: count(db, "pets"), orders: count(db, "orders"), keys: count(db, "api_keys") };
  } catch {
    throw new Error(`${name} is not a Pet Store database (it has no pets, orders and api_keys tables)`);
  }
}

/** `2 pets, 1 order, 0 API keys`. */
export function describedContents(contents: DatabaseContents): string {
  const counted = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;
  return `${counted(contents.pets, "pet")}, ${counted(contents.orders, "order")}, ${counted(contents.keys, "API key")}`;
}

/** Both paths name one file (also through a link): compared by stat, never by opening. */
export function sameFile(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    const [first, second] = [statSync(a), statSync(b)];
    return first.dev === second.dev && first.ino === second.ino;
  } catch {
    return false;
  }
}

export function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The copy a `backup` or `restore` writes beside a database file before renaming it into place. */
export interface CopyBeside {
  /** `.NAME.PID-RAND.partial` or `.restoring`, beside the file, as `removeAbandonedCopies` reads them. */
  path: string;
  /** Removes the copy and any journal SQLite left beside it. */
  remove(): void;
}

/**
 * Starts a copy beside `path`: first removes the copies a killed `backup` or `restore` left
 * there, then names this one.
 */
export function copyBeside(path: string, kind: "partial" | "restoring"): CopyBeside {
  removeAbandonedCopies(path, kind);
  // Web Crypto rather than node:crypto, whose streams every start of the binary loaded.
  const random = Array.from(crypto.getRandomValues(new Uint8Array(4)), (byte) =>
    byte.toString(16).padStart(2, "0"),
  ).join("");
  const copy = join(dirname(path), `.${basename(path)}.${process.pid}-${random}.${kind}`);
  return {
    path: copy,
    remove: () => {
      for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(`${copy}${suffix}`, { force: true });
    },
  };
}

/**
 * Removes the copies a `backup` or `restore` killed midway left beside `path`
 * (`.NAME.PID-RAND.partial` or `.restoring`, and their journals) whose process is gone.
 */
function removeAbandonedCopies(path: string, kind: "partial" | "restoring"): void {
  const prefix = `.${basename(path)}.`;
  const copy = new RegExp(`^(\\d+)-[0-9a-f]+\\.${kind}`);
  for (const name of readdirSync(dirname(path))) {
    const match = name.startsWith(prefix) ? copy.exec(name.slice(prefix.length)) : null;
    if (match && !processRuns(Number(match[1]))) rmSync(join(dirname(path), name), { force: true });
  }
}

/** Whether a process with this id runs (one of another user's counts). */
function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === "EPERM";
  }
}

/**
 * The storage of `db` for a command that only reads or changes keys; undefined, with one line
 * on stderr, for a local file that does not exist: SQLite would create an empty database there,
 * and a mistyped path would look like a database without keys.
 */
export async function openExistingStorage(db: DbConfig, io: Io): Promise<Storage | undefined> {
  const path = localPath(db.url);
  if (path !== undefined && !exists(path)) {
    io.err(
      `petstore: no database at ${path} (is the path right? '${io.program} serve', '${io.program} keys create' or '${io.program} admin-tokens create' makes one)`,
    );
    return undefined;
  }
  return openStorage(db);
}

/** The database a command stores a credential in, open: as it may be shown, and whether the command made it. */
export interface CredentialDatabase {
  storage: Storage;
  /** A file's absolute path, or a server's URL without credentials. */
  database: string;
  /** There was no database at the path: this command made it. */
  created: boolean;
}

/**
 * Opens the database a command that makes a credential (`keys create`, `admin-tokens create`)
 * stores it in, making a file that does not exist (a fresh machine's first key or token), runs
 * `run` and closes it. A credential stored anywhere but the server's database is refused there
 * with nothing to say why, so the command says where it went (`storedLine`). `:memory:` is a
 * usage mistake (`memoryMistake`): the credential would be gone when the command ends.
 */
export async function withCredentialDatabase(
  db: DbConfig,
  memoryMistake: string,
  run: (target: CredentialDatabase) => Promise<number>,
): Promise<number> {
  if (databaseLocation(db.url).kind === "memory") throw new UsageError(memoryMistake);
  const path = localPath(db.url);
  const [database, created] = path === undefined ? [shownUrl(db.url), false] : [path, !exists(path)];
  const storage = await openStorage(db);
  try {
    return await run({ storage, database, created });
  } finally {
    storage.close();
  }
}

/** Where a credential was stored; for a database made now, what a server on another one does with it (`elsewhere`). */
export function storedLine({ database, created }: CredentialDatabase, elsewhere: string): string {
  return created
    ? `Stored in a new database, ${database}: there was none at that path. ${elsewhere}: give its database with --db (or PETSTORE_DB).`
    : `Stored in the database ${database}.`;
}
