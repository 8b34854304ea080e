import type { Decision } from "@petstore/core";
import { type SqlLimiter, sqlLimiter, type TimedHit } from "../_sql/limiter.js";
import { SQLITE_LIMITER_STATEMENTS } from "../libsql/limiter.js";
import { RATE_LIMITS_MIGRATIONS } from "../libsql/migrations.js";
import { type DurableObjectState, storageEngine } from "./_storage-engine.js";

const MINUTE = 60_000;

/** When the decision's buckets are over: every window of each reset, any ban ended. */
const overAt = (decision: Decision) =>
  Math.max(
    decision.bannedUntil ?? 0,
    ...decision.windows.map((w) => w.resetAt),
    ...(decision.shared ?? []).flat().map((w) => w.resetAt),
  );

/**
 * The Durable Object class that holds rate-limit buckets for `durableObjectLimiter`: export it
 * from your worker and bind it (a SQLite-backed class: `new_sqlite_classes` in the wrangler
 * migrations). It decides with the libSQL limiter's statement on its own SQLite storage, so it
 * decides exactly what the SQL limiters decide, by the object's own clock, and its counters and
 * bans survive a restart. Once its buckets are over (their day windows reset and any ban
 * ended, rounded up to a minute) an alarm deletes the object's storage, so buckets of callers
 * never seen again cost nothing.
 * @example export { PetstoreRateLimiter } from "@petstore/adapters/durable-objects";
 */
export class PetstoreRateLimiter {
  readonly #ctx: DurableObjectState;
  readonly #limiter: SqlLimiter;
  /** Whether the table is migrated: not after `deleteAll`, until the next hit. */
  #ready = false;
  /**
   * The object's alarm (runtime clock; 0: none), read back by the first hit of an instance: one
   * object holds every bucket of an account, so an alarm set for one bucket's end must never
   * move before another's (a ban that outlives a day window), after a restart either.
   */
  #alarmAt: number | undefined;

  constructor(ctx: DurableObjectState, _env?: unknown) {
    this.#ctx = ctx;
    this.#limiter = sqlLimiter(storageEngine(ctx), SQLITE_LIMITER_STATEMENTS);
  }

  /**
   * What `durableObjectLimiter` sends: a `HitInput` as JSON (with `now` only when a test's clock
   * decides) to `/hit` (its `Decision` as JSON out), `/peek` (the `BucketState`) or `/unban`
   * (`{ "unbanned": boolean }`).
   */
  async fetch(request: Request): Promise<Response> {
    const { now = null, ...input } = (await request.json()) as Omit<TimedHit, "now"> & { now?: number };
    this.#migrateLibsql();
    const { pathname } = new URL(request.url);
    if (pathname === "/peek") return Response.json(await this.#limiter.peek({ ...input, now }));
    if (pathname === "/unban") return Response.json({ unbanned: await this.#limiter.unban(input.bucket, now) });
    const decision = await this.#limiter.hit({ ...input, now });
    // The alarm runs on the runtime's clock, the decision on the object's SQLite clock (the
    // same, but for a test's clock): the bucket's remaining life is measured on the second and
    // counted down on the first. Rounded up to a minute, so the alarm is not moved on every hit.
    const deleteAt = Math.ceil((Date.now() + overAt(decision) - decision.now) / MINUTE) * MINUTE;
    this.#alarmAt ??= (await this.#ctx.storage.getAlarm()) ?? 0;
    if (deleteAt > this.#alarmAt) {
      this.#alarmAt = deleteAt;
      await this.#ctx.storage.setAlarm(deleteAt);
    }
    return Response.json(decision);
  }

  /**
   * The libSQL migrations of `rate_limits`, each applied once, recorded in the object's own
   * `rate_limits_schema`: the table is the libSQL one, never a copy of it that could drift.
   */
  #migrateLibsql(): void {
    if (this.#ready) return;
    const { sql } = this.#ctx.storage;
    sql.exec("CREATE TABLE IF NOT EXISTS rate_limits_schema (version INTEGER PRIMARY KEY)");
    let applied = Number(
      sql.exec("SELECT coalesce(max(version), 0) AS version FROM rate_limits_schema").toArray()[0]!.version,
    );
    if (applied === 0) applied = this.#versionWithoutRecord();
    for (const { version, statements } of RATE_LIMITS_MIGRATIONS) {
      if (version <= applied) continue;
      for (const statement of statements) sql.exec(statement);
      sql.exec("INSERT INTO rate_limits_schema (version) VALUES (?)", version);
    }
    this.#ready = true;
  }

  /**
   * An object an earlier release made kept no versions: its table had the shape of migration
   * 3 (`admitted`, `refused`) or, with `decided_at`, of migration 5. None: a new object.
   */
  #versionWithoutRecord(): number {
    const columns = this.#ctx.storage.sql
      .exec("SELECT name FROM pragma_table_info('rate_limits')")
      .toArray()
      .map((column) => column.name);
    if (columns.length === 0) return 0;
    return columns.includes("decided_at") ? 5 : 3;
  }

  /**
   * The buckets are over: every hit that lengthened their life moved the alarm later, and no hit
   * runs between this check-free handler's start and the deletion (the runtime's input gate).
   */
  async alarm(): Promise<void> {
    await this.#ctx.storage.deleteAll();
    this.#ready = false;
    this.#alarmAt = 0;
  }
}
