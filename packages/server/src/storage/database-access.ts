import { accessSync, closeSync, constants, existsSync, openSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Why this process cannot write a local database at `path`, in words that name the fix;
 * undefined when the files look writable (or cannot be inspected: Deno without
 * `--allow-read`/`--allow-sys`), so the driver's own reason stands. Asked only after SQLite
 * failed, so the probe file it may create cannot race a connection of ours.
 */
export function databaseAccessProblem(path: string): string | undefined {
  try {
    const directory = dirname(path);
    if (!existsSync(path)) return creationProblem(path, directory);
    for (const file of [path, `${path}-wal`, `${path}-shm`]) {
      if (existsSync(file)) {
        const denied = writeDenied(file);
        if (denied !== undefined)
          return denied === "EROFS" ? readOnlyFileSystem(directory) : ownerProblem(file, path, "the database file");
      }
    }
    // SQLite makes the -wal and -shm files beside the database when it opens it.
    const denied = writeDenied(directory);
    if (denied !== undefined)
      return denied === "EROFS" ? readOnlyFileSystem(directory) : ownerProblem(directory, path, "its directory");
    return undefined;
  } catch {
    return undefined;
  }
}

/** The file does not exist: create one the way SQLite would, to learn why it cannot. */
function creationProblem(path: string, directory: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, "wx");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "EACCES" || code === "EPERM") return ownerProblem(directory, path, "its directory");
    if (code === "EROFS") return readOnlyFileSystem(directory);
    return `no file can be created in ${directory} (${String(code)}): give a --db path in a directory for data, e.g. file:/var/lib/petstore/petstore.db`;
  }
  // It could be made after all: not the reason. Leave nothing behind.
  closeSync(fd);
  unlinkSync(path);
  return undefined;
}

function readOnlyFileSystem(directory: string): string {
  return `the file system of ${directory} is read-only: give a --db path on a writable one`;
}

/**
 * Another user's file, or its owner's without write permission: who owns it and the fix.
 * Undefined when its owner runs this and may write it by its mode (an immutable file, an
 * ACL): no owner or mode to name.
 */
function ownerProblem(file: string, database: string, what: string): string | undefined {
  const { uid, mode } = statSync(file);
  const owner = userName(uid);
  const me = userName(process.getuid!());
  if (owner === me)
    return mode & 0o200
      ? undefined
      : `${what} ${file} is not writable (mode ${(mode & 0o777).toString(8)}) by its owner ${me}: chmod u+w ${file}`;
  const chown = what === "its directory" ? `${file} ${database}*` : `${database}*`;
  return (
    `${what} ${file} belongs to ${owner}, and this process runs as ${me}, who may not write it: ` +
    `run petstore as ${owner} (sudo -u ${owner} petstore ...), or give the files to ${me} (sudo chown ${me} ${chown})`
  );
}

/** Why this process may not write `path` (EACCES, EPERM, EROFS...); undefined when it may. */
function writeDenied(path: string): string | undefined {
  try {
    accessSync(path, constants.W_OK);
    return undefined;
  } catch (error) {
    return String((error as { code?: unknown }).code);
  }
}

/** A user's name from /etc/passwd, else `uid N` (macOS keeps most users elsewhere). */
function userName(uid: number): string {
  try {
    for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
      const [name, , id] = line.split(":");
      if (id === String(uid) && name) return name;
    }
  } catch {
    // Unreadable: the number will do.
  }
  return `uid ${uid}`;
}
