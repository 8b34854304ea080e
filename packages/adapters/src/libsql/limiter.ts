import { CLOCK_STEP_MS, type RateLimiter } from "@petstore/core";
import { bucketRows, type LimiterStatements, limiterStatements, sqlLimiter, timedBy } from "../_sql/limiter.js";
import { SQLITE_NOW, type StoreClockOptions } from "../_sql/store-clock.js";
import { engineOf, type LibsqlSource } from "./_source.js";

/** How a hit writes a bucket's row: new, or over the row it decided from (the shared hit's too). */
const UPSERT = `ON CONFLICT (bucket) DO UPDATE SET
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
    CASE WHEN k.kept AND r.window0_start >= k.start0 THEN r.window0_start ELSE k.start0 END AS window0_start,
    CASE WHEN k.kept AND r.window0_start >= k.start0 THEN r.window0_count ELSE 0 END AS window0_count,
    CASE WHEN k.kept AND r.window0_start >= k.start0 THEN r.refusals ELSE 0 END AS refusals,
    CASE WHEN k.kept AND r.window1_start >= k.start1 THEN r.window1_start ELSE k.start1 END AS window1_start,
    CASE WHEN k.kept AND r.window1_start >= k.start1 THEN r.window1_count ELSE 0 END AS window1_count,
    CASE WHEN k.kept THEN coalesce(r.banned_until, 0) ELSE 0 END AS banned_until
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
INSERT INTO rate_limits (bucket, window0_start, window0_count, window1_start, window1_count, refusals, banned_until, expires_at, admitted, refused, decided_at)
SELECT :bucket, window0_start, window0_count, window1_start, window1_count, refusals, banned_until,
  max(banned_until, window0_start + :length0, window1_start + :length1), admitted, refused, now
FROM next
WHERE true
${UPSERT}
RETURNING window0_start, window0_count, window1_start, window1_count, banned_until, admitted, refused, decided_at`;

/**
 * The whole decision for `:hits` hits on bucket 0 and the buckets it shares (an account's) as
 * one statement, the same steps as `HIT_SQL_NAMED` over a row per bucket (`spec`: each
 * bucket's name and windows). `found`: each bucket's row, `kept` unless its last decision is
 * more than CLOCK_STEP_MS after the clock as read; `clock`: the instant, never before the last
 * decision of a kept bucket; `current`: each bucket moved to the current windows (a bucket not
 * kept starts over, as new); `decided`: during bucket 0's ban nothing is admitted, otherwise as
 * many hits as every window of every bucket has room for; `split`: the refusals counted toward
 * bucket 0's ban, as in `HIT_SQL_NAMED`; `next`: admissions count in every bucket, refusals in
 * bucket 0 only. One row per bucket is written and returned, with its name. `found`, `current`
 * and `decided` are MATERIALIZED: left to the planner, `decided`'s subquery was evaluated
 * again for each of the eleven places its result is read (this statement took about 1.5 x
 * as long, and was most of a file GET's CPU). `split`, one row of arithmetic over `decided`,
 * is left to the planner, which folds it into `next`: another table built and read for each
 * hit cost more than evaluating it once per bucket.
 */
const sharedHitSql = (n: number) => `
WITH
spec (ord, bucket, length0, length1, limit0, limit1) AS (VALUES ${bucketRows(n)}),
found AS MATERIALIZED (
  SELECT s.*, t.read, r.window0_start AS w0s, r.window0_count AS w0c, r.window1_start AS w1s,
    r.window1_count AS w1c, r.refusals AS stored_refusals, r.banned_until AS stored_banned_until,
    r.decided_at AS last, coalesce(r.decided_at - t.read <= ${CLOCK_STEP_MS}, 0) AS kept
  FROM spec AS s
  CROSS JOIN (SELECT coalesce(:now, ${SQLITE_NOW}) AS read) AS t
  LEFT JOIN rate_limits AS r ON r.bucket = s.bucket
),
clock AS (SELECT max(max(read), coalesce(max(CASE WHEN kept THEN last END), 0)) AS now FROM found),
current AS MATERIALIZED (
  SELECT ord, bucket, length0, length1, limit0, limit1, now,
    CASE WHEN kept AND w0s >= start0 THEN w0s ELSE start0 END AS window0_start,
    CASE WHEN kept AND w0s >= start0 THEN w0c ELSE 0 END AS window0_count,
    CASE WHEN kept AND w0s >= start0 THEN stored_refusals ELSE 0 END AS refusals,
    CASE WHEN kept AND w1s >= start1 THEN w1s ELSE start1 END AS window1_start,
    CASE WHEN kept AND w1s >= start1 THEN w1c ELSE 0 END AS window1_count,
    CASE WHEN kept THEN coalesce(stored_banned_until, 0) ELSE 0 END AS banned_until
  FROM (SELECT f.*, k.now, k.now - k.now % f.length0 AS start0, k.now - k.now % f.length1 AS start1
    FROM found AS f CROSS JOIN clock AS k)
),
decided AS MATERIALIZED (
  SELECT now, refusals,
    banned_until > now AS banned,
    CASE WHEN banned_until > now THEN 0
      ELSE max(0, min(:hits, (SELECT min(min(limit0 - window0_count, limit1 - window1_count)) FROM current))) END AS admitted
  FROM current WHERE ord = 0
),
split AS (
  SELECT *,
    CASE WHEN banned THEN 0
      WHEN :banMs <= 0 THEN :hits - admitted
      ELSE min(:hits - admitted, max(0, :threshold - refusals)) END AS limited,
    :banMs > 0 AND NOT banned AND :hits - admitted > max(0, :threshold - refusals) AS bans
  FROM decided
),
next AS (
  SELECT c.bucket, c.length0, c.length1, c.window0_start, c.window0_count + s.admitted AS window0_count,
    c.window1_start, c.window1_count + s.admitted AS window1_count,
    CASE WHEN c.ord = 0 THEN c.refusals + s.limited + s.bans ELSE c.refusals END AS refusals,
    CASE WHEN c.ord = 0 AND s.bans THEN s.now + :banMs ELSE c.banned_until END AS banned_until,
    s.admitted, s.limited + s.bans AS refused, s.now
  FROM current AS c CROSS JOIN split AS s
)
INSERT INTO rate_limits (bucket, window0_start, window0_count, window1_start, window1_count, refusals, banned_until, expires_at, admitted, refused, decided_at)
SELECT bucket, window0_start, window0_count, window1_start, window1_count, refusals, banned_until,
  max(banned_until, window0_start + length0, window1_start + length1), admitted, refused, now
FROM next
WHERE true
${UPSERT}
RETURNING bucket, window0_start, window0_count, window1_start, window1_count, banned_until, admitted, refused, decided_at`;

/** SQLite's text for the shared limiter (also run by the Durable Object limiter, on its own storage). */
export const SQLITE_LIMITER_STATEMENTS: LimiterStatements = limiterStatements({
  placeholder: (position) => `?${position}`,
  now: SQLITE_NOW,
  hit: HIT_SQL_NAMED,
  // A write transaction holds the whole database: the shared hit needs no lock of its own.
  sharedHit: sharedHitSql,
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
