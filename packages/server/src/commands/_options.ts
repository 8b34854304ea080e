import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import type { Actor } from "@petstore/core";
import { type LimiterTarget, parseLimiterUrl } from "../limiter/limiter-url.js";
import type { LimiterConfig } from "../limiter/open-limiter.js";
import { databaseLocation } from "@petstore/adapters/libsql/connect";
import { programName } from "../messages/program-name.js";
import { firstHostOf } from "../storage/postgres-connection.js";
import { type DbConfig, POSTGRES_URL } from "../storage/open-storage.js";
import { shownUrl } from "../messages/shown-url.js";
import type { ParsedArgs } from "../cli/parse-args.js";
import { UsageError } from "../cli/usage-error.js";
import type { Env } from "./_command.js";

const DEFAULT_DB = "file:petstore.db";
const DB_URL = /^(file:.+|:memory:|libsql:\/\/.+|https?:\/\/.+|postgres(ql)?:\/\/.+)$/;

/**
 * A flag's value, else the environment variable's (an empty variable, or one Deno's
 * `--allow-env` does not let through, counts as unset: see `optionalEnv`).
 */
export function setting(
  args: ParsedArgs,
  flag: string,
  env: Env,
  variable: string,
): { value: string; source: string } | undefined {
  const fromFlag = args.values[flag];
  if (fromFlag !== undefined) return { value: fromFlag, source: `--${flag}` };
  const fromEnv = optionalEnv(env, variable);
  return fromEnv === undefined ? undefined : { value: fromEnv, source: variable };
}

/** `--db` or `PETSTORE_DB` (default `file:petstore.db`), with `PETSTORE_DB_AUTH_TOKEN` (libSQL) or `PGPASSWORD` (Postgres). */
export function dbConfig(args: ParsedArgs, env: Env): DbConfig {
  const given = setting(args, "db", env, "PETSTORE_DB");
  const db = given ?? { value: DEFAULT_DB, source: "--db" };
  const typed = db.source === "--db" ? "--db " : `${db.source}=`;
  if (!DB_URL.test(db.value)) {
    // With credentials in it the value is not repeated, nor read for what it meant.
    const secret = db.value.includes("@");
    throw new UsageError(
      `${db.source} must be file:PATH, :memory:, libsql://HOST, http(s)://HOST or postgres://HOST/DATABASE, not ${secret ? "the value given (not repeated here: it may hold a password)" : `'${shownUrl(db.value)}'${meantFile(db.value, typed)}`}`,
    );
  }
  if (db.value.startsWith("file:")) {
    try {
      databaseLocation(db.value);
    } catch (error) {
      throw new UsageError(fileUrlMistake(db.value, db.source, typed) ?? `${db.source}: ${(error as Error).message}`);
    }
  }
  // A URL with a host must parse: the drivers' own "Invalid URL" named neither the flag nor the value.
  // A Postgres URL may name several hosts (h1:p1,h2:p2), which `URL` cannot read: its first is checked.
  const parsable = POSTGRES_URL.test(db.value) ? firstHostOf(db.value) : db.value;
  if (/^[a-z]+:\/\//.test(db.value) && !URL.canParse(parsable)) {
    // With credentials in it the value is not repeated: where a password ends cannot be known.
    const shown = db.value.includes("@") ? "(not repeated here: it may hold a password)" : `'${db.value}'`;
    throw new UsageError(
      `${db.source} is not a valid URL ${shown}; characters such as # / ? @ : in a password must be percent-encoded`,
    );
  }
  const config: DbConfig = { url: db.value, advice: { setting: given?.source, program: programName(env) } };
  const authToken = optionalEnv(env, "PETSTORE_DB_AUTH_TOKEN");
  if (authToken) config.authToken = authToken;
  // Postgres credentials stay out of the process list: the URL's password, else PGPASSWORD.
  const password = POSTGRES_URL.test(db.value) ? optionalEnv(env, "PGPASSWORD") : undefined;
  if (password) config.password = password;
  // How long a request waits for another process's write lock (or a remote answer) before a 503.
  const busyTimeout = optionalEnv(env, "PETSTORE_DB_BUSY_TIMEOUT_MS");
  if (busyTimeout) config.busyTimeoutMs = integerSetting(busyTimeout, "PETSTORE_DB_BUSY_TIMEOUT_MS", 1, 600_000);
  return config;
}

/**
 * What a --db value that is no URL of ours meant, as the words to type (`typed` is `--db ` or
 * `PETSTORE_DB=`): a bare path, or another tool's SQLite URL. `sqlite:PATH` and
 * `sqlite://PATH` (sqlx, dburl) name PATH; `sqlite:///PATH` is /PATH to some (sqlx) and the
 * relative PATH to others (SQLAlchemy), so both are given. Empty when it is no such mistake.
 */
function meantFile(value: string, typed: string): string {
  if (!value.includes(":")) return `; for a file, ${typed}file:${value}`;
  const sqlite = /^sqlite3?:(.*)$/i.exec(value)?.[1];
  if (sqlite === undefined) return "";
  if (sqlite === ":memory:" || sqlite === "//:memory:") return `; for a database in memory, ${typed}:memory:`;
  const path = sqlite.startsWith("//") ? sqlite.slice(2) : sqlite;
  if (path === "") return "";
  const named = "; that is another tool's URL of a SQLite file, and petstore's is file:PATH:";
  if (path.startsWith("/") && sqlite.startsWith("//"))
    return `${named} for ${path}, ${typed}file:${path} (SQLAlchemy reads ${value.slice(0, value.indexOf(":"))}:/// as relative: for ${path.slice(1)} in the current directory, ${typed}file:${path.slice(1)})`;
  return `${named} for ${path}${path.startsWith("/") ? "" : " in the current directory"}, ${typed}file:${path}`;
}

/**
 * A `file://HOST/...` URL, whose HOST was meant as the path's first name (`file://petstore.db`,
 * `file://data/petstore.db`): what it means, and what to type for either path it may have meant.
 */
function fileUrlMistake(value: string, source: string, typed: string): string | undefined {
  const rest = /^file:\/\/([^/?#]+[^?#]*)/.exec(value)?.[1];
  if (rest === undefined) return undefined;
  const host = rest.split("/")[0]!;
  return `${source} ${value} names ${host} as a host, and a file: URL takes none: for ${rest} in the current directory, ${typed}file:${rest}; for /${rest}, ${typed}file:/${rest} (or file:///${rest})`;
}

/**
 * A variable's value; undefined when unset, empty, or unreadable: Deno throws on a variable
 * its --allow-env does not list, and one the operator did not let through was not given.
 */
export function optionalEnv(env: Env, variable: string): string | undefined {
  try {
    const value = env[variable];
    return value === "" ? undefined : value;
  } catch {
    return undefined;
  }
}

/**
 * Who runs this process, as the system knows them: the name of its user id in the password
 * database, else the id itself (`uid 1001`), as under systemd or in a container where no
 * `USER` is set. Read from /etc/passwd: Bun's `os.userInfo()` answers `unknown` without `USER`.
 */
function processUser(): string {
  const uid = process.getuid?.();
  if (uid === undefined) return "unknown";
  try {
    const entry = readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .map((line) => line.split(":"))
      .find((fields) => fields[2] === String(uid));
    if (entry?.[0]) return entry[0];
  } catch {
    // No password file to read (or Deno without --allow-read): the id says who.
  }
  return `uid ${uid}`;
}

/**
 * Who runs a CLI command, as the audit trail records it: `cli:<user>@<host>`, from the
 * environment's `USER` (or `LOGNAME`), else the process's user, and the machine's name.
 */
export function cliActor(env: Env): Actor {
  const user = optionalEnv(env, "USER") ?? optionalEnv(env, "LOGNAME") ?? processUser();
  let host = "unknown";
  try {
    host = hostname();
  } catch {
    // Deno without --allow-sys=hostname: the user alone says who.
  }
  return { who: `cli:${user}@${host}` };
}

/** A whole number in `min..max` written in decimal digits; `source` names the flag or variable. */
export function integerSetting(text: string, source: string, min: number, max: number): number {
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`${source} must be a whole number from ${min} to ${max}, not '${text}'`);
  }
  return value;
}

/**
 * The database URL for a command to paste: its user and parameters kept (without them the
 * command would connect as someone else, or without TLS), its password and any secret
 * parameter (a token) never.
 */
export function pastableDb(url: string): string {
  if (!/^[a-z]+:\/\//.test(url) || !URL.canParse(url)) return shownUrl(url);
  const parsed = new URL(url);
  parsed.password = "";
  for (const name of [...parsed.searchParams.keys()])
    if (/pass|token|secret|key/i.test(name)) parsed.searchParams.delete(name);
  return parsed.toString();
}

/**
 * The highest Redis database index `--limiter` takes: Redis has 16 (0..15) unless its
 * `databases` setting says otherwise, and Redis Cluster has only 0. A typo (`/99`, `/abc`)
 * is a usage mistake; a server configured with fewer refuses the index at start.
 */
const MAX_REDIS_DATABASE = 15;
/** The default of `PETSTORE_LIMITER_TIMEOUT_MS`: a hit waits at most this long for Redis. */
const DEFAULT_LIMITER_TIMEOUT_MS = 1_000;

/** The database index in a Redis URL's path (none: 0); anything but 0..15 is a usage mistake, never database 0 in silence. */
function redisDatabase(url: string, source: string): number {
  const path = new URL(url).pathname;
  if (path === "" || path === "/") return 0;
  const index = /^\/(\d{1,2})$/.exec(path)?.[1];
  if (index === undefined || Number(index) > MAX_REDIS_DATABASE) {
    // The path holds no credentials: it may be shown.
    throw new UsageError(
      `${source}'s database must be a whole number from 0 to ${MAX_REDIS_DATABASE} (redis://HOST:PORT/DB), not '${decodeURIComponent(path.slice(1))}'`,
    );
  }
  return Number(index);
}

/**
 * `--limiter` or `PETSTORE_LIMITER` (unset: the limiter lives in the database), with
 * `PETSTORE_LIMITER_PASSWORD`, `PETSTORE_LIMITER_TIMEOUT_MS` and `--limiter-fail-open` (or
 * `PETSTORE_LIMITER_FAIL_OPEN=1`). A mistyped URL is never repeated: it may hold a password.
 */
export function limiterConfig(args: ParsedArgs, env: Env): LimiterConfig | undefined {
  const read = (variable: string) => optionalEnv(env, variable);
  const url = args.values.limiter ?? read("PETSTORE_LIMITER");
  const source = args.values.limiter !== undefined ? "--limiter" : "PETSTORE_LIMITER";
  const failOpenEnv = read("PETSTORE_LIMITER_FAIL_OPEN");
  if (failOpenEnv !== undefined && failOpenEnv !== "0" && failOpenEnv !== "1") {
    throw new UsageError(`PETSTORE_LIMITER_FAIL_OPEN must be 0 or 1, not '${failOpenEnv}'`);
  }
  const failOpen = args.switches.has("limiter-fail-open") || failOpenEnv === "1";
  const timeout = read("PETSTORE_LIMITER_TIMEOUT_MS");
  if (url === undefined) {
    if (failOpen || timeout !== undefined)
      throw new UsageError("--limiter-fail-open and PETSTORE_LIMITER_TIMEOUT_MS need --limiter (or PETSTORE_LIMITER)");
    return undefined;
  }
  let target: LimiterTarget;
  try {
    target = parseLimiterUrl(url);
  } catch (error) {
    throw new UsageError(
      `${source} ${(error as Error).message} (the URL is not repeated here: it may hold a password)`,
    );
  }
  if (target.kind === "sentinel" && target.db > MAX_REDIS_DATABASE) {
    throw new UsageError(
      `${source}'s database must be a whole number from 0 to ${MAX_REDIS_DATABASE} (redis+sentinel://HOST:PORT,.../MASTER/DB), not '${target.db}'`,
    );
  }
  const config: LimiterConfig = {
    url,
    // A cluster has only database 0 (limiter-url.ts refuses another).
    database: target.kind === "single" ? redisDatabase(url, source) : target.kind === "sentinel" ? target.db : 0,
    timeoutMs:
      timeout === undefined
        ? DEFAULT_LIMITER_TIMEOUT_MS
        : integerSetting(timeout, "PETSTORE_LIMITER_TIMEOUT_MS", 1, 60_000),
    failOpen,
  };
  const password = read("PETSTORE_LIMITER_PASSWORD");
  if (password !== undefined) config.password = password;
  return config;
}
