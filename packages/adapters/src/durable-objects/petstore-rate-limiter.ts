import type { Decision, HitInput, RateLimiter } from "@petstore/core";
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
 * A bucket is deleted only this long after its windows and ban are over, as the SQL limiters'
 * sweep waits: a request stamped by a late clock still finds the counters it counts against.
 */
const GRACE_MS = 60_000;
const MINUTE = 60_000;

/** How long after `now` the decision's bucket is over: every window reset, any ban ended. */
const lifeAfter = (decision: Decision, now: number) => Math.max(decision.bannedUntil ?? 0, ...decision.windows.map((w) => w.resetAt)) - now;

/**
 * The Durable Object class that holds rate-limit buckets for `durableObjectLimiter`: export it
 * from your worker and bind it (a SQLite-backed class: `new_sqlite_classes` in the wrangler
 * migrations). It decides with the libSQL limiter's statement on its own SQLite storage, so it
 * decides exactly what the SQL limiters decide, and its counters and bans survive a restart.
 * Once its bucket is over (a minute after its day window reset and any ban ended) an alarm
 * deletes the object's storage, so buckets of callers never seen again cost nothing.
 * @example export { PetstoreRateLimiter } from "@petstore/adapters/durable-objects";
 */
export class PetstoreRateLimiter {
  readonly #ctx: DurableObjectState;
  readonly #limiter: RateLimiter;
  /** Whether the table exists: not after `deleteAll`, until the next hit. */
  #ready = false;
  /** The alarm this instance last set (runtime clock); 0 after a restart: the next hit sets it again. */
  #alarmAt = 0;

  constructor(ctx: DurableObjectState, _env?: unknown) {
    this.#ctx = ctx;
    this.#limiter = sqlLimiter(storageEngine(ctx), SQLITE_LIMITER_STATEMENTS, "PetstoreRateLimiter");
  }

  /** One hit: a `HitInput` as JSON in, its `Decision` as JSON out (what `durableObjectLimiter` sends). */
  async fetch(request: Request): Promise<Response> {
    const input = (await request.json()) as HitInput;
    this.#createTable();
    const decision = await this.#limiter.hit(input);
    // The alarm runs on the runtime's clock, the decision on the caller's (`input.now`): the
    // bucket's remaining life is measured on the second and counted down on the first. Rounded
    // up to a minute, so that drift between the clocks does not move the alarm on every hit.
    const deleteAt = Math.ceil((Date.now() + lifeAfter(decision, input.now) + GRACE_MS) / MINUTE) * MINUTE;
    if (deleteAt > this.#alarmAt) {
      this.#alarmAt = deleteAt;
      await this.#ctx.storage.setAlarm(deleteAt);
    }
    return Response.json(decision);
  }

  #createTable(): void {
    if (!this.#ready) this.#ctx.storage.sql.exec(SCHEMA);
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
