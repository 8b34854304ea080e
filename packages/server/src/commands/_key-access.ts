import { type ApiKeyRecord, type KeyLife, type KeyView, keyLife, keyView, type RateLimiter } from "@petstore/core";
import { type OpenLimiter, openLimiter } from "../limiter/open-limiter.js";
import { type Storage, storageFailure } from "../storage/open-storage.js";
import type { ParsedArgs } from "../cli/parse-args.js";
import { UsageError } from "../cli/usage-error.js";
import type { Env, Io } from "./_command.js";
import { openExistingStorage } from "./_database-file.js";
import { dbConfig, limiterConfig } from "./_options.js";

/** What a keys command works on: the database's storage, the limiter its servers count in, and the key life over both. */
export interface KeyAccess {
  storage: Storage;
  /** Core's key life on this database: every change a command makes goes through it. */
  life: KeyLife;
  /** The limiter the servers count the keys in; undefined when this command cannot reach it (see `noLimiter`). */
  limiter: RateLimiter | undefined;
  /** Why `limiter` is undefined, as one line naming the flag that gives it. */
  noLimiter: string | undefined;
  /** A key as `keys show --json` prints it: the admin API's view, with its usage from `limiter`. */
  view(record: ApiKeyRecord): Promise<KeyView>;
}

/** The help lines of `--db` and `--limiter`, shared by the keys commands that read usage. */
export const DB_AND_LIMITER_HELP = `  --db URL        file:PATH (default file:petstore.db), libsql://, postgres:// (env PETSTORE_DB;
                  PETSTORE_DB_AUTH_TOKEN, PGPASSWORD). A file that does not exist is refused
  --limiter URL   the Redis the servers keep the rate limits in, when they run with --limiter:
                  redis://HOST[:PORT][/DB], redis+cluster://..., redis+sentinel://...
                  or rediss... (as serve --help says; env PETSTORE_LIMITER; password in
                  PETSTORE_LIMITER_PASSWORD). Without it usage and bans are read from the
                  database, unless its servers recorded that they count in Redis`;

/** The one line for an id no key has; resolves the exit code. */
export function noSuchKey(io: Io, id: string): number {
  io.err(`petstore: no API key has the id '${id}' (see '${io.program} keys list')`);
  return 1;
}

/** The one line for a change to a revoked key; resolves the exit code. */
export function revokedKey(io: Io, id: string, revokedAt: number): number {
  io.err(
    `petstore: ${id} was revoked at ${new Date(revokedAt).toISOString().replace(/\.\d{3}Z$/, "Z")}: a revoked key takes no change (create a new key instead)`,
  );
  return 1;
}

/** Views of many keys: at most this many peeks at the limiter at once. */
const PEEKS_AT_ONCE = 16;

/** The views of `records` in their order, a few at a time. */
export async function viewsOf(access: KeyAccess, records: readonly ApiKeyRecord[]): Promise<KeyView[]> {
  const views: KeyView[] = [];
  for (let start = 0; start < records.length; start += PEEKS_AT_ONCE) {
    views.push(
      ...(await Promise.all(records.slice(start, start + PEEKS_AT_ONCE).map((record) => access.view(record)))),
    );
  }
  return views;
}

/**
 * Opens the database of `--db` (refusing one that does not exist, with one line and exit 1)
 * and, for the commands that take `--limiter` (`limiter: true`), the limiter the servers count
 * in: Redis with `--limiter` (or `PETSTORE_LIMITER`), else the database. The database records
 * where its servers keep the limits (`serve` agrees on it): a Redis given for a database whose
 * servers count in it is a failure, and no Redis given for one whose servers count in Redis
 * leaves `limiter` undefined, with the reason, rather than reading counts nobody keeps.
 * Runs `run`, turns a storage failure into its one line (a usage mistake stays one), and closes.
 */
export async function withDatabase(
  args: ParsedArgs,
  env: Env,
  io: Io,
  options: { limiter: boolean },
  run: (access: KeyAccess) => Promise<number>,
): Promise<number> {
  const db = dbConfig(args, env);
  // A CLI never admits requests: it only peeks and lifts bans, so it has nothing to fail open for.
  const redisConfig = options.limiter ? limiterConfig(args, env) : undefined;
  const storage = await openExistingStorage(db, io);
  if (storage === undefined) return 1;
  let redis: OpenLimiter | undefined;
  try {
    const recorded = await storage.recordedSetting("limiter");
    if (redisConfig && recorded === "database") {
      throw new Error(
        "the servers of this database keep the rate limits in the database, not in Redis: run this without --limiter (and PETSTORE_LIMITER)",
      );
    }
    let noLimiter: string | undefined;
    if (redisConfig) {
      const warn = (event: string, fields: Record<string, unknown>) =>
        io.err(`petstore: ${event}${fields.reason === undefined ? "" : `: ${String(fields.reason)}`}`);
      redis = await openLimiter({ ...redisConfig, failOpen: false }, warn, { watchDataLoss: false });
    } else if (recorded === "redis") {
      noLimiter =
        "the servers of this database keep the rate limits in Redis: give --limiter redis://HOST (or PETSTORE_LIMITER) to read usage and bans there";
    }
    const limiter = redis?.limiter ?? (noLimiter === undefined ? storage.adapters.limiter : undefined);
    const access: KeyAccess = {
      storage,
      life: keyLife({ keys: storage.adapters.keys, ...(limiter && { limiter }) }),
      limiter,
      noLimiter,
      view: (record) => keyView(record, limiter ? { limiter } : {}),
    };
    return await run(access);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new Error(storageFailure(db, error), { cause: error });
  } finally {
    redis?.close();
    storage.close();
  }
}
