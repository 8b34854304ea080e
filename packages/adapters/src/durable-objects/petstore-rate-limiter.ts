import type { Decision } from "@petstore/core";
import { type SqlLimiter, sqlLimiter, type TimedHit } from "../_sql/limiter.js";
import { SQLITE_LIMITER_STATEMENTS } from "../libsql/limiter.js";
import { type DurableObjectState, storageEngine } from "./_storage-engine.js";

/**
 * The libSQL schema's `rate_limits` table (libsql/migrations.ts, versions 1, 3 and 5), which
 * the shared hit statement reads and writes; an object holds the one row of its bucket.
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
  refused INTEGER NOT NULL DEFAULT 0,
  decided_at INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID`;

const MINUTE = 60_000;

/** When the decision's bucket is over: every window reset, any ban ended. */
const overAt = (decision: Decision) => Math.max(decision.bannedUntil ?? 0, ...decision.windows.map((w) => w.resetAt));

/**
 * The Durable Object class that holds rate-limit buckets for `durableObjectLimiter`: export it
 * from your worker and bind it (a SQLite-backed class: `new_sqlite_classes` in the wrangler
 * migrations). It decides with the libSQL limiter's statement on its own SQLite storage, so it
 * decides exactly what the SQL limiters decide, by the object's own clock, and its counters and
 * bans survive a restart. Once its bucket is over (its day window reset and any ban ended,
 * rounded up to a minute) an alarm deletes the object's storage, so buckets of callers never
 * seen again cost nothing.
 * @example export { PetstoreRateLimiter } from "@petstore/adapters/durable-objects";
 */
export class PetstoreRateLimiter {
  readonly #ctx: DurableObjectState;
  readonly #limiter: SqlLimiter;
  /** Whether the table exists: not after `deleteAll`, until the next hit. */
  #ready = false;
  /** The alarm this instance last set (runtime clock); 0 after a restart: the next hit sets it again. */
  #alarmAt = 0;

  constructor(ctx: DurableObjectState, _env?: unknown) {
    this.#ctx = ctx;
    this.#limiter = sqlLimiter(storageEngine(ctx), SQLITE_LIMITER_STATEMENTS, "PetstoreRateLimiter");
  }

  /**
   * What `durableObjectLimiter` sends: a `HitInput` as JSON (with `now` only when a test's clock
   * decides) to `/hit` (its `Decision` as JSON out), `/peek` (the `BucketState`) or `/unban`
   * (`{ "unbanned": boolean }`).
   */
  async fetch(request: Request): Promise<Response> {
    const { now = null, ...input } = (await request.json()) as Omit<TimedHit, "now"> & { now?: number };
    this.#createTable();
    const { pathname } = new URL(request.url);
    if (pathname === "/peek") return Response.json(await this.#limiter.peek({ ...input, now }));
    if (pathname === "/unban") return Response.json({ unbanned: await this.#limiter.unban(input.bucket, now) });
    const decision = await this.#limiter.hit({ ...input, now });
    // The alarm runs on the runtime's clock, the decision on the object's SQLite clock (the
    // same, but for a test's clock): the bucket's remaining life is measured on the second and
    // counted down on the first. Rounded up to a minute, so the alarm is not moved on every hit.
    const deleteAt = Math.ceil((Date.now() + overAt(decision) - decision.now) / MINUTE) * MINUTE;
    if (deleteAt > this.#alarmAt) {
      this.#alarmAt = deleteAt;
      await this.#ctx.storage.setAlarm(deleteAt);
    }
    return Response.json(decision);
  }

  #createTable(): void {
    if (this.#ready) return;
    const { sql } = this.#ctx.storage;
    sql.exec(SCHEMA);
    // An object whose table an earlier version made has no `decided_at` yet (libSQL migration 5).
    if (!sql.exec("SELECT name FROM pragma_table_info('rate_limits')").toArray().some((column) => column.name === "decided_at")) {
      sql.exec("ALTER TABLE rate_limits ADD COLUMN decided_at INTEGER NOT NULL DEFAULT 0");
    }
    this.#ready = true;
  }

  /**
   * The bucket is over: every hit that lengthened its life moved the alarm later, and no hit
   * runs between this check-free handler's start and the deletion (the runtime's input gate).
   */
  async alarm(): Promise<void> {
    await this.#ctx.storage.deleteAll();
    this.#ready = false;
    this.#alarmAt = 0;
  }
}
