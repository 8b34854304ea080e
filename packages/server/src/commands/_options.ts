import { parseLimiterUrl } from "../limiter-url.js";
import type { LimiterConfig } from "../open-limiter.js";
import { type DbConfig, POSTGRES_URL } from "../open-storage.js";
import type { ParsedArgs } from "../parse-args.js";
import { UsageError } from "../usage-error.js";
import type { Env } from "./_command.js";

const DEFAULT_DB = "file:petstore.db";
const DB_URL = /^(file:.+|:memory:|libsql:\/\/.+|https?:\/\/.+|postgres(ql)?:\/\/.+)$/;

/** A flag's value, else the environment variable's (an empty variable counts as unset). */
export function setting(args: ParsedArgs, flag: string, env: Env, variable: string): { value: string; source: string } | undefined {
  const fromFlag = args.values[flag];
  if (fromFlag !== undefined) return { value: fromFlag, source: `--${flag}` };
  const fromEnv = env[variable];
  if (fromEnv !== undefined && fromEnv !== "") return { value: fromEnv, source: variable };
  return undefined;
}

/** `--db` or `PETSTORE_DB` (default `file:petstore.db`), with `PETSTORE_DB_AUTH_TOKEN` (libSQL) or `PGPASSWORD` (Postgres). */
export function dbConfig(args: ParsedArgs, env: Env): DbConfig {
  const db = setting(args, "db", env, "PETSTORE_DB") ?? { value: DEFAULT_DB, source: "--db" };
  if (!DB_URL.test(db.value)) {
    throw new UsageError(`${db.source} must be file:PATH, :memory:, libsql://HOST, http(s)://HOST or postgres://HOST/DATABASE, not '${displayDb(db.value)}'`);
  }
  const config: DbConfig = { url: db.value };
  const authToken = env.PETSTORE_DB_AUTH_TOKEN;
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

/** The highest per-minute or per-day limit a key may have (`keys create`, the bootstrap key). */
export const MAX_LIMIT = 1_000_000_000;

/** A whole number in `min..max` written in decimal digits; `source` names the flag or variable. */
export function integerSetting(text: string, source: string, min: number, max: number): number {
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`${source} must be a whole number from ${min} to ${max}, not '${text}'`);
  }
  return value;
}

/** The database URL as it may be shown: without credentials or query parameters. */
export function displayDb(url: string): string {
  return url.replace(/\?.*$/, "").replace(/\/\/[^/@]*@/, "//");
}

/** The default of `PETSTORE_LIMITER_TIMEOUT_MS`: a hit waits at most this long for Redis. */
const DEFAULT_LIMITER_TIMEOUT_MS = 1_000;

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
    if (failOpen || timeout !== undefined) throw new UsageError("--limiter-fail-open and PETSTORE_LIMITER_TIMEOUT_MS need --limiter (or PETSTORE_LIMITER)");
    return undefined;
  }
  try {
    parseLimiterUrl(url);
  } catch (error) {
    throw new UsageError(`${source} ${(error as Error).message} (the URL is not repeated here: it may hold a password)`);
  }
  const config: LimiterConfig = {
    url,
    timeoutMs: timeout === undefined ? DEFAULT_LIMITER_TIMEOUT_MS : integerSetting(timeout, "PETSTORE_LIMITER_TIMEOUT_MS", 1, 60_000),
    failOpen,
  };
  const password = read("PETSTORE_LIMITER_PASSWORD");
  if (password !== undefined) config.password = password;
  return config;
}
