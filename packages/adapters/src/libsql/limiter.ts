import { CLOCK_STEP_MS, type RateLimiter } from "@petstore/core";
import { type LimiterStatements, limiterStatements, sqlLimiter, timedBy } from "../_sql/limiter.js";
import { currentBucket, RATE_LIMIT_COLUMNS } from "../_sql/limiter-sql.js";
import { SQLITE_NOW, type StoreClockOptions } from "../_sql/store-clock.js";
import { engineOf, type LibsqlSource } from "./_source.js";

/**
 * How a hit writes a bucket's row: new, or over the row it decided from (the shared hit's too).
 * `WHERE true`: SQLite would read the `ON` after `INSERT ... SELECT ... FROM` as a join's.
 */
const UPSERT = `WHERE true
ON CONFLICT (bucket) DO UPDATE SET
  window0_start = excluded.window0_start, window0_count = excluded.window0_count,
  window1_start = excluded.window1_start, window1_count = excluded.window1_count,
  refusals = excluded.refusals, banned_until = excluded.banned_until,
  expires_at = excluded.expires_at, admitted = excluded.admitted, refused = excluded.refused,
  decided_at = excluded.decided_at`;

/**
 * The whole decision for `:hits` hits on one bucket (usually 1; more when requests of one turn
 * of the event loop share a bucket, see `sqlLimiter`) as one statement, so it is atomic across
 * connections and processes, and decides exactly what as many single hits in a row would.
 * `clock`: the instant it decides at, the database's clock as read unless `:now` gives one (a
 * test's), never before the bucket's last decision (`decided_at`), and the windows containing
 * it; the bucket is `kept` unless that last decision is more than CLOCK_STEP_MS after the
 * clock as read: then the clock stepped back since, and the bucket starts over, as new (see
 * `RateLimiter`). `current`: the bucket as kept (or an empty one), each window moved forward
 * to the current one; refusals count within window 0 and reset with it. `decided`: during a ban
 * nothing is admitted; otherwise as many hits as both windows have room for. `split`: the
 * refused hits are refused as over the limit until one of them is the threshold's crossing
 * refusal, which bans the bucket: it and those after it are answered as banned. `next`:
 * admissions count in both windows; refusals consume nothing but count toward the ban, the
 * crossing one too; a ban changes nothing else. `admitted`, `refused` (the refusals counted,
 * the crossing one too) and `decided_at` (also the bucket's last instant) are kept in the
 * row so that `RETURNING` can report them.
 */
const HIT_SQL_NAMED = `
WITH
clock AS (
  SELECT now, now - now % :length0 AS start0, now - now % :length1 AS start1, kept
  FROM (
    SELECT CASE WHEN kept THEN max(read, last) ELSE read END AS now, kept
    FROM (
      SELECT read, last, coalesce(last - read <= ${CLOCK_STEP_MS}, 0) AS kept
      FROM (
        SELECT coalesce(:now, ${SQLITE_NOW}) AS read,
          (SELECT decided_at FROM rate_limits WHERE bucket = :bucket) AS last
      )
    )
  )
),
current AS (
  SELECT
    k.now,
    ${currentBucket("r")}
  FROM clock AS k LEFT JOIN rate_limits AS r ON r.bucket = :bucket
),
decided AS (
  SELECT *,
    banned_until > now AS banned,
    CASE WHEN banned_until > now THEN 0
      ELSE max(0, min(:hits, :limit0 - window0_count, :limit1 - window1_count)) END AS admitted
  FROM current
),
split AS (
  SELECT *,
    CASE WHEN banned THEN 0
      -- A ban of no length is over at once: every refusal is an ordinary one.
      WHEN :banMs <= 0 THEN :hits - admitted
      ELSE min(:hits - admitted, max(0, :threshold - refusals)) END AS limited,
    :banMs > 0 AND NOT banned AND :hits - admitted > max(0, :threshold - refusals) AS bans
  FROM decided
),
next AS (
  SELECT
    window0_start,
    window0_count + admitted AS window0_count,
    window1_start,
    window1_count + admitted AS window1_count,
    refusals + limited + bans AS refusals,
    CASE WHEN bans THEN now + :banMs ELSE banned_until END AS banned_until,
    admitted,
    limited + bans AS refused,
    now
  FROM split
)
INSERT INTO rate_limits (bucket, ${RATE_LIMIT_COLUMNS})
SELECT :bucket, window0_start, window0_count, window1_start, window1_count, refusals, banned_until,
  max(banned_until, window0_start + :length0, window1_start + :length1), admitted, refused, now
FROM next
${UPSERT}
RETURNING window0_start, window0_count, window1_start, window1_count, banned_until, admitted, refused, decided_at`;

/** SQLite's text for the shared limiter (also run by the Durable Object limiter, on its own storage). */
export const SQLITE_LIMITER_STATEMENTS: LimiterStatements = limiterStatements({
  placeholder: (position) => `?${position}`,
  now: SQLITE_NOW,
  hit: HIT_SQL_NAMED,
  sharedHit: {
    clock: SQLITE_NOW,
    greatest: "max",
    least: "min",
    false: "0",
    count: (flag) => flag,
    // Left to the planner, `decided`'s subquery was evaluated again for each of the eleven
    // places its result is read (the statement took about 1.5 x as long, and was most of a file
    // GET's CPU). `split`, one row of arithmetic over `decided`, is folded into `next` by the
    // planner: another table built and read for each hit cost more than evaluating it once per
    // bucket.
    materialized: ["found", "current", "decided"],
    into: "rate_limits",
    upsert: UPSERT,
  },
  // No `lock`: a write transaction holds the whole database, so the shared hit needs none.
});

/**
 * Fixed-window counters in a libSQL database (run `migrateLibsql` first), exact when many processes
 * share it: each decision is one `INSERT ... ON CONFLICT DO UPDATE ... RETURNING` that decides
 * every window all-or-nothing, at the database's clock (a remote server's own; this machine's
 * for a local file), or `options.clock`'s (tests). On a local engine the hits on one bucket
 * that arrive before the next write batch begins (one turn of the event loop: a busy key's
 * concurrent requests) are decided by one statement, in their order of arrival. Expired
 * buckets are deleted by every 1000th statement (no timers). The ban counts refusals within
 * the first window (the minute's).
 */
export function libsqlLimiter(source: LibsqlSource, options: StoreClockOptions = {}): RateLimiter {
  return timedBy(sqlLimiter(engineOf(source), SQLITE_LIMITER_STATEMENTS), options.clock);
}
