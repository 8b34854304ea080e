import { statSync } from "node:fs";

/**
 * Whether the files a local database was opened on are still the files at their paths. A
 * database file removed or replaced while open (`rm`, `mv`, a restore over a running server)
 * keeps working through the descriptors SQLite holds, so commits succeed into a file that is
 * gone at the next start; the same for its `-wal` and `-shm` files, which another process
 * would then make anew beside ours. Only `stat` is used: opening and closing a descriptor of
 * the database would drop SQLite's locks (see `_wal-sync.ts`).
 */
export interface FileIdentity {
  /**
   * Before a connection is (re)opened: the sentence when the database file itself changed (a
   * new connection would then open, or create, another file), else undefined. The `-wal` and
   * `-shm` files are then learnt anew, since SQLite makes new ones when a database's last
   * connection closes.
   */
  reopening(): string | undefined;
  /** After a connection was opened: the database file is known from the first one on. */
  opened(): void;
  /** A sentence naming the file that is gone or is another one now; undefined while all are in place. */
  changed(): string | undefined;
}

type Inode = { dev: number; ino: number } | undefined;

function inodeOf(path: string): Inode {
  const stat = statSync(path, { throwIfNoEntry: false });
  return stat && { dev: stat.dev, ino: stat.ino };
}

const same = (a: Inode, b: Inode) => a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino;

/**
 * The identity of the database file at `path`. Checks nothing where this process may not look
 * at the file (Deno without `--allow-read`).
 */
export function fileIdentity(path: string): FileIdentity {
  try {
    inodeOf(path);
  } catch {
    return { reopening: () => undefined, opened: () => {}, changed: () => undefined };
  }
  let database: Inode;
  /** The companions as last seen; undefined until they exist (a new database has none yet). */
  const companions = new Map<string, Inode>();
  const databaseChanged = () =>
    database === undefined || same(database, inodeOf(path))
      ? undefined
      : `The database file ${path} was removed or replaced while open`;
  return {
    reopening() {
      companions.clear();
      return databaseChanged();
    },
    opened() {
      database ??= inodeOf(path);
    },
    changed() {
      const moved = databaseChanged();
      if (moved !== undefined) return moved;
      for (const suffix of ["-wal", "-shm"]) {
        const known = companions.get(suffix);
        const now = inodeOf(path + suffix);
        if (known === undefined)
          companions.set(suffix, now); // first seen since (re)opening
        else if (!same(known, now)) return `The database's ${suffix} file was removed or replaced while open`;
      }
      return undefined;
    },
  };
}
