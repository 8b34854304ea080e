import { renameSync, rmSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import NativeDatabase from "libsql";
import { POSTGRES_URL } from "../storage/open-storage.js";
import { UsageError } from "../cli/usage-error.js";
import type { Command } from "./_command.js";
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
import { dbConfig } from "./_options.js";

/** What `restore` did, as printed. */
interface RestoreSummary extends DatabaseContents {
  db: string;
  from: string;
  /** False when the replaced database could not be read: ids handed out after the backup may be handed out again. */
  idsContinue: boolean;
  /** Where a WAL that could not be checkpointed into the replaced database was kept, if one was. */
  keptWal?: string;
}

/**
 * Checks that the backup is a whole Pet Store database and copies it to `temp` with `VACUUM
 * INTO` (one consistent read, so a backup that has a WAL of its own is copied whole).
 */
function copyBackup(from: string, temp: string): DatabaseContents {
  const backup = new NativeDatabase(from, { timeout: 0 });
  try {
    const contents = checkedContents(backup, from);
    backup.exec(`VACUUM INTO '${temp.replaceAll("'", "''")}'`);
    return contents;
  } catch (error) {
    if ((error as { code?: unknown }).code === "SQLITE_NOTADB") throw new Error(`${from} is not a database file`);
    throw error;
  } finally {
    backup.close();
  }
}

/** Another process has the database open: said as it is, not as a failure to restore. */
class DatabaseInUseError extends Error {}

/**
 * Holds the live database for this process alone: in exclusive locking mode SQLite takes an
 * exclusive lock on the database file at the first statement, which fails at once (no busy
 * wait) while any other connection, a server's, sqlite3's, has the database open (in WAL mode
 * every open connection holds a shared lock on it). Only `exec` runs on this connection: a
 * prepared statement would keep the native connection alive past `close()`.
 */
function holdExclusively(db: string): NativeDatabase.Database {
  const live = new NativeDatabase(db, { timeout: 0 });
  try {
    live.exec("PRAGMA locking_mode = EXCLUSIVE");
    live.exec("BEGIN EXCLUSIVE; COMMIT");
    return live;
  } catch (error) {
    live.close();
    const code = (error as { code?: unknown }).code;
    if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
      throw new DatabaseInUseError(
        `another process has ${db} open (a running petstore serve, or sqlite3): stop it, then restore`,
      );
    }
    throw error;
  }
}

/**
 * Replaces the database `db` with a copy of the backup `from`. In order, so that a kill at any
 * point leaves either the old database or the new one, never a mix:
 * 1. the backup is checked (integrity, a Pet Store database) and copied to a temporary name
 *    beside the database; nothing else is touched yet;
 * 2. the live database is held exclusively (refused while another process has it open) and its
 *    WAL checkpointed into it; a WAL that cannot be (a damaged database) is moved aside, since
 *    an old WAL beside the new file would be read as part of it;
 * 3. the copy's id counters are raised to what the replaced database handed out, so no id
 *    acknowledged before the restore is handed out again; the copy is fsynced;
 * 4. the copy is renamed over the database (one step), the directory fsynced, and the old
 *    WAL and shared-memory files removed.
 */
function restore(from: string, db: string): RestoreSummary {
  const copy = copyBeside(db, "restoring");
  const temp = copy.path;
  let idsContinue = false;
  let keptWal: string | undefined;
  let contents: DatabaseContents;
  try {
    contents = copyBackup(from, temp);
  } catch (error) {
    copy.remove();
    throw error;
  }
  let live: NativeDatabase.Database | undefined;
  try {
    live = exists(db) ? holdExclusively(db) : undefined;
    if (live) {
      try {
        live.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch {
        // Damaged: its WAL cannot go into it. Kept for whoever wants to recover from it.
        if (exists(`${db}-wal`) && statSync(`${db}-wal`).size > 0) {
          keptWal = `${db}-wal.before-restore-${Date.now()}`;
          renameSync(`${db}-wal`, keptWal);
        }
      }
      try {
        // The copy, attached to the live connection: the live database is opened by no other.
        live.exec(`ATTACH DATABASE '${temp.replaceAll("'", "''")}' AS restored`);
        live.exec(`
          BEGIN;
          INSERT INTO restored.sqlite_sequence (name, seq)
            SELECT name, seq FROM main.sqlite_sequence WHERE name NOT IN (SELECT name FROM restored.sqlite_sequence);
          UPDATE restored.sqlite_sequence SET seq = max(seq, coalesce((SELECT old.seq FROM main.sqlite_sequence AS old WHERE old.name = restored.sqlite_sequence.name), 0));
          COMMIT;`);
        idsContinue = true;
      } catch {
        // The replaced database is unreadable: the backup's own counters stand.
        if (live.inTransaction) live.exec("ROLLBACK");
      } finally {
        try {
          live.exec("DETACH DATABASE restored");
        } catch {
          // Not attached.
        }
      }
    } else idsContinue = true;
    syncPath(temp, "r+");
    live?.close();
    renameSync(temp, db);
    syncPath(dirname(db), "r");
    for (const suffix of ["-wal", "-shm"]) rmSync(`${db}${suffix}`, { force: true });
    return { db, from, ...contents, idsContinue, ...(keptWal === undefined ? {} : { keptWal }) };
  } catch (error) {
    if (live?.open) live.close();
    copy.remove();
    if (error instanceof DatabaseInUseError) throw error;
    throw new Error(`cannot restore ${db}: ${reason(error)}`);
  }
}

export const restoreCommand: Command = {
  spec: { name: "restore", flags: { db: "value", from: "value", json: "switch" }, positionals: [] },
  usage: "petstore restore --from FILE [--db file:PATH] [--json]",
  help: `Replaces a local database with a backup made by 'petstore backup'. Stop the servers first:
restore refuses while any process has the database open. The backup is checked (PRAGMA
integrity_check) before anything is touched; the database is replaced in one step (a copy
under a temporary name, then a rename), and its old -wal and -shm files are removed, so a kill
at any point leaves the old database or the new one. New ids continue after the highest id the
replaced database handed out, so no id a client was given before the restore is given again.
Pets, orders and keys made after the backup are gone, and so are their idempotency records:
a client that retries such a create gets a new pet.

  --from FILE  the backup to restore
  --db URL     the database to replace: file:PATH (default file:petstore.db; env PETSTORE_DB)
  --json       print one JSON object: db, from, pets, orders, keys, idsContinue`,
  run: async (args, env, io) => {
    const from = args.values.from;
    if (from === undefined || from === "") throw new UsageError("--from is required: the backup to restore");
    const { url } = dbConfig(args, env);
    if (POSTGRES_URL.test(url)) {
      io.err("petstore: restore replaces a local database file; for Postgres use pg_restore");
      return 1;
    }
    const db = localPath(url);
    if (db === undefined) {
      io.err(
        `petstore: restore replaces a local database file (file:PATH), not ${url.startsWith("file:") || url === ":memory:" ? url : "a remote server"}`,
      );
      return 1;
    }
    const backup = resolve(from);
    if (!exists(backup) || !statSync(backup).isFile()) {
      io.err(`petstore: no backup at ${backup}`);
      return 1;
    }
    if (!exists(dirname(db))) {
      io.err(`petstore: the directory ${dirname(db)} does not exist`);
      return 1;
    }
    if (sameFile(backup, db) || [`${db}-wal`, `${db}-shm`, `${db}-journal`].includes(backup)) {
      io.err(`petstore: --from ${backup} is the database itself (or one of its files)`);
      return 1;
    }
    const summary = restore(backup, db);
    if (args.switches.has("json")) io.out(JSON.stringify(summary));
    else {
      io.out(`Restored ${db} from ${backup}: ${describedContents(summary)}; integrity check ok.`);
      if (summary.idsContinue) io.out("New ids continue after the highest id the replaced database handed out.");
      else
        io.err(
          "petstore: warning: the replaced database could not be read, so ids handed out after the backup may be handed out again",
        );
      if (summary.keptWal)
        io.err(`petstore: warning: the replaced database's WAL could not be checkpointed; kept as ${summary.keptWal}`);
    }
    return 0;
  },
};
