import { accessSync, closeSync, constants, existsSync, openSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { dirname } from "node:path";

/** What a failure's words need beyond the path: how the user named the database, and how they run petstore. */
export interface StorageAdvice {
  /** The flag or variable that named the URL (`--db`, `PETSTORE_DB`); undefined when none did (the default). */
  setting: string | undefined;
  /** What the user types to run petstore (see `programName`). */
  program: string;
}

/** Where a service keeps its database, as the fixes suggest it (docs/vm.md's place). */
const DATA_DIRECTORY = "/var/lib/petstore";

/**
 * Why this process cannot write a local database at `path`, in words that name the fix;
 * undefined when the files look writable (or cannot be inspected: Deno without
 * `--allow-read`/`--allow-sys`), so the driver's own reason stands. Asked only after SQLite
 * failed, so the probe file it may create cannot race a connection of ours.
 */
export function databaseAccessProblem(path: string, advice: StorageAdvice): string | undefined {
  try {
    const directory = dirname(path);
    if (!existsSync(path)) return creationProblem(path, directory, advice);
    for (const file of [path, `${path}-wal`, `${path}-shm`]) {
      if (existsSync(file)) {
        const denied = writeDenied(file);
        if (denied !== undefined)
          return denied === "EROFS"
            ? readOnlyFileSystem(directory)
            : ownerProblem(file, path, "the database file", advice);
      }
    }
    // SQLite makes the -wal and -shm files beside the database when it opens it.
    const denied = writeDenied(directory);
    if (denied !== undefined)
      return denied === "EROFS"
        ? readOnlyFileSystem(directory)
        : ownerProblem(directory, path, "its directory", advice);
    return undefined;
  } catch {
    return undefined;
  }
}

/** The file does not exist: create one the way SQLite would, to learn why it cannot. */
function creationProblem(path: string, directory: string, advice: StorageAdvice): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, "wx");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "EACCES" || code === "EPERM") return ownerProblem(directory, path, "its directory", advice);
    if (code === "EROFS") return readOnlyFileSystem(directory);
    return `no file can be created in ${directory} (${String(code)}): give a --db path in a directory for data, e.g. file:${DATA_DIRECTORY}/petstore.db`;
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
 * ACL): no owner or mode to name. In a directory that is the system's or another user's home,
 * the fix is another place for the database, never handing that directory over.
 */
function ownerProblem(file: string, database: string, what: string, advice: StorageAdvice): string | undefined {
  const { uid, mode } = statSync(file);
  const users = passwd();
  const owner = userName(uid, users);
  const me = userName(process.getuid!(), users);
  if (owner === me)
    return mode & 0o200
      ? undefined
      : `${what} ${file} is not writable (mode ${(mode & 0o777).toString(8)}) by its owner ${me}: chmod u+w ${file}`;
  const problem = `${what} ${file} belongs to ${owner}, and this process runs as ${me}, who may not write it`;
  const directory = dirname(database);
  const elsewhere = `${advice.setting === "PETSTORE_DB" ? "PETSTORE_DB=" : "--db "}file:${DATA_DIRECTORY}/petstore.db (sudo install -d -o ${me} ${DATA_DIRECTORY} makes it)`;
  if (notToGiveAway(directory, me, users)) {
    if (advice.setting === undefined)
      return `${problem}. Without --db the database is petstore.db in the current directory, ${directory}, which is not ${me}'s to write: run petstore where ${me} may write, or name a place, e.g. ${elsewhere}`;
    return `${problem}, and ${directory} is not ${me}'s to write: give ${advice.setting} a file in a directory ${me} may write, e.g. ${elsewhere}`;
  }
  const chown = what === "its directory" ? `${file} ${database}*` : `${database}*`;
  const fixes =
    `run petstore as ${owner} (sudo -u ${owner} ${advice.program} ...), or give the files to ${me} (sudo chown ${me} ${chown})` +
    (advice.setting === undefined
      ? `, or name a place ${me} may write (without --db the database is petstore.db in the current directory), e.g. ${elsewhere}`
      : "");
  return `${problem}: ${fixes}`;
}

/** The system's own trees: nothing under them is a place for data. */
const SYSTEM_TREES = [
  "/usr",
  "/etc",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/boot",
  "/proc",
  "/sys",
  "/dev",
  "/run",
];

/**
 * A directory no fix should hand to `me`: `/` and the top-level directories (`/usr`, `/home`,
 * `/var`, `/tmp`...), anything in the system's own trees, `/var`'s own (`/var/lib`), and another
 * user's home or anything in it. `/var/lib/petstore` or `/srv/petstore` may be given.
 */
function notToGiveAway(directory: string, me: string, users: PasswdEntry[]): boolean {
  const parent = dirname(directory);
  if (parent === directory || parent === "/" || parent === "/var") return true;
  if (SYSTEM_TREES.some((tree) => directory.startsWith(`${tree}/`))) return true;
  return users.some(
    ({ name, home }) => name !== me && home !== "/" && home !== "" && `${directory}/`.startsWith(`${home}/`),
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

interface PasswdEntry {
  name: string;
  uid: string;
  home: string;
}

/** The users of /etc/passwd; none where it cannot be read (macOS keeps most users elsewhere). */
function passwd(): PasswdEntry[] {
  try {
    return readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .map((line) => line.split(":"))
      .filter((fields) => fields.length >= 6 && fields[0] !== "")
      .map((fields) => ({ name: fields[0]!, uid: fields[2]!, home: fields[5]! }));
  } catch {
    return [];
  }
}

/** A user's name, else `uid N`. */
function userName(uid: number, users: PasswdEntry[]): string {
  return users.find((user) => user.uid === String(uid))?.name ?? `uid ${uid}`;
}
