import type { HitInput, RateLimiter } from "@petstore/core";
import { sqlLimiter } from "../_sql/limiter.js";
import { SQLITE_LIMITER_STATEMENTS } from "../libsql/limiter.js";
import { type DurableObjectState, storageEngine } from "./_storage-engine.js";

/**
 * The libSQL schema's `rate_limits` table (libsql/migrations.ts, versions 1 and 3), which the
 * shared hit statement reads and writes; an object holds the one row of its bucket.
 */
const SCHEMA = `CREATE TABLE IF NOT EXISTS rate_limits (
  bucket TEXT PRIMARY KEY,
  window0_start INTEGER NOT NULL,
  window0_count INTEGER NOT NULL,
  window1_start INTEGER NOT NULL,
  window1_count INTEGER NOT NULL,
  refusals INTEGER NOT NULL,
  banned_until INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  admitted INTEGER NOT NULL DEFAULT 0,
  refused INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID`;

/**
 * The Durable Object class that holds rate-limit buckets for `durableObjectLimiter`: export it
 * from your worker and bind it (a SQLite-backed class: `new_sqlite_classes` in the wrangler
 * migrations). It decides with the libSQL limiter's statement on its own SQLite storage, so it
 * decides exactly what the SQL limiters decide, and its counters and bans survive a restart.
 * @example export { PetstoreRateLimiter } from "@petstore/adapters/durable-objects";
 */
export class PetstoreRateLimiter {
  readonly #limiter: RateLimiter;

  constructor(ctx: DurableObjectState, _env?: unknown) {
    ctx.storage.sql.exec(SCHEMA);
    this.#limiter = sqlLimiter(storageEngine(ctx), SQLITE_LIMITER_STATEMENTS, "PetstoreRateLimiter");
  }

  /** One hit: a `HitInput` as JSON in, its `Decision` as JSON out (what `durableObjectLimiter` sends). */
  async fetch(request: Request): Promise<Response> {
    const input = (await request.json()) as HitInput;
    return Response.json(await this.#limiter.hit(input));
  }
}
