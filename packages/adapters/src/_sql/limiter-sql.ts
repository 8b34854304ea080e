import { CLOCK_STEP_MS } from "@petstore/core";

/** The columns of a bucket's row a hit writes, after its name, in the order every hit statement lists them. */
export const RATE_LIMIT_COLUMNS =
  "window0_start, window0_count, window1_start, window1_count, refusals, banned_until, expires_at, admitted, refused, decided_at";

/**
 * A bucket's stored row (`row`: its alias, NULL columns for a new bucket) moved forward to the
 * windows of the instant `k` (`k.kept`, `k.start0`, `k.start1`; the shared hit's `k` is the row
 * too), as a hit on it finds it: a
 * window still current keeps its count (window 0 its refusals too), one that rolled over
 * starts at 0; a bucket not `kept` (the clock stepped back since its last decision) starts
 * over, as new.
 */
export const currentBucket = (row: string) =>
  `CASE WHEN k.kept AND ${row}.window0_start >= k.start0 THEN ${row}.window0_start ELSE k.start0 END AS window0_start,
    CASE WHEN k.kept AND ${row}.window0_start >= k.start0 THEN ${row}.window0_count ELSE 0 END AS window0_count,
    CASE WHEN k.kept AND ${row}.window0_start >= k.start0 THEN ${row}.refusals ELSE 0 END AS refusals,
    CASE WHEN k.kept AND ${row}.window1_start >= k.start1 THEN ${row}.window1_start ELSE k.start1 END AS window1_start,
    CASE WHEN k.kept AND ${row}.window1_start >= k.start1 THEN ${row}.window1_count ELSE 0 END AS window1_count,
    CASE WHEN k.kept THEN coalesce(${row}.banned_until, 0) ELSE 0 END AS banned_until`;

/** A step of the shared hit that a dialect may have built once, as a table of its own (see `SharedHitDialect.materialized`). */
type Step = "read" | "found" | "current" | "decided";

/** What a dialect writes differently in the shared hit; its steps and their meaning are the same (see `sharedHitSql`). */
export interface SharedHitDialect {
  /** The store's clock in SQL, read when no `:now` is given (see store-clock.ts). */
  clock: string;
  /** The largest and the smallest of their arguments: SQLite's `max` and `min`, PostgreSQL's `greatest` and `least`. */
  greatest: string;
  least: string;
  /** False, for a bucket with no row: SQLite has no boolean type (0). */
  false: string;
  /** A boolean as a number to add to a count (SQLite's already is one). */
  count(flag: string): string;
  /**
   * The steps built once, each read as a table (`AS MATERIALIZED`), by the planner's cost on
   * this engine. `read` built once is a step of its own before the buckets are read; otherwise
   * the instant is read inside `found`.
   */
  materialized: readonly Step[];
  /** The table written, as the INSERT names it. */
  into: string;
  /** What follows the rows to write: the `ON CONFLICT (bucket) DO UPDATE` that writes them over the rows they were decided from. */
  upsert: string;
}

/** `(0, :bucket0, :length0_0, :length1_0, :limit0_0, :limit1_0), (1, ...)`: a shared hit's buckets as rows of VALUES. */
function bucketRows(n: number): string {
  return Array.from(
    { length: n },
    (_, i) => `(${i}, :bucket${i}, :length0_${i}, :length1_${i}, :limit0_${i}, :limit1_${i})`,
  ).join(", ");
}

/**
 * The whole decision for `:hits` hits on bucket 0 and the `n - 1` buckets it shares (an
 * account's) as one statement, the same steps as a single bucket's hit over a row per bucket
 * (`spec`: each bucket's name and windows, as the named parameters `:bucket0`, `:length0_0`...
 * of `LimiterStatements.sharedHit`). `found`: each bucket's row, `kept` unless its last
 * decision is more than CLOCK_STEP_MS after the clock as read (`:now` when given, else the
 * store's); `clock`: the instant, never before the last decision of a kept bucket; `current`:
 * each bucket moved to the current windows (a bucket not kept starts over, as new); `decided`:
 * during bucket 0's ban nothing is admitted, otherwise as many hits as every window of every
 * bucket has room for; `split`: the refused hits are refused as over the limit until one of
 * them is the threshold's crossing refusal, which bans bucket 0 (a ban of no length is over at
 * once: every refusal is an ordinary one); `next`: admissions count in every bucket, refusals
 * in bucket 0 only. One row per bucket is written and returned, with its name.
 */
export function sharedHitSql(n: number, dialect: SharedHitDialect): string {
  const { greatest, least } = dialect;
  const built = (step: Step) => (dialect.materialized.includes(step) ? " MATERIALIZED" : "");
  const read = `SELECT coalesce(:now, ${dialect.clock}) AS read`;
  const readOnce = dialect.materialized.includes("read");
  return `
WITH
${readOnce ? `t AS MATERIALIZED (${read}),\n` : ""}spec (ord, bucket, length0, length1, limit0, limit1) AS (VALUES ${bucketRows(n)}),
found AS${built("found")} (
  SELECT s.*, t.read, r.window0_start, r.window0_count, r.window1_start, r.window1_count, r.refusals,
    r.banned_until, r.decided_at AS last, coalesce(r.decided_at - t.read <= ${CLOCK_STEP_MS}, ${dialect.false}) AS kept
  FROM spec AS s
  CROSS JOIN ${readOnce ? "t" : `(${read}) AS t`}
  LEFT JOIN rate_limits AS r ON r.bucket = s.bucket
),
clock AS (SELECT ${greatest}(max(read), coalesce(max(CASE WHEN kept THEN last END), 0)) AS now FROM found),
current AS${built("current")} (
  SELECT k.ord, k.bucket, k.length0, k.length1, k.limit0, k.limit1, k.now,
    ${currentBucket("k")}
  FROM (SELECT f.*, c.now, c.now - c.now % f.length0 AS start0, c.now - c.now % f.length1 AS start1
    FROM found AS f CROSS JOIN clock AS c) AS k
),
decided AS${built("decided")} (
  SELECT now, refusals,
    banned_until > now AS banned,
    CASE WHEN banned_until > now THEN 0
      ELSE ${greatest}(0, ${least}(:hits, (SELECT min(${least}(limit0 - window0_count, limit1 - window1_count)) FROM current))) END AS admitted
  FROM current WHERE ord = 0
),
split AS (
  SELECT *,
    CASE WHEN banned THEN 0
      WHEN :banMs <= 0 THEN :hits - admitted
      ELSE ${least}(:hits - admitted, ${greatest}(0, :threshold - refusals)) END AS limited,
    :banMs > 0 AND NOT banned AND :hits - admitted > ${greatest}(0, :threshold - refusals) AS bans
  FROM decided
),
next AS (
  SELECT c.bucket, c.length0, c.length1, c.window0_start, c.window0_count + s.admitted AS window0_count,
    c.window1_start, c.window1_count + s.admitted AS window1_count,
    CASE WHEN c.ord = 0 THEN c.refusals + s.limited + ${dialect.count("s.bans")} ELSE c.refusals END AS refusals,
    CASE WHEN c.ord = 0 AND s.bans THEN s.now + :banMs ELSE c.banned_until END AS banned_until,
    s.admitted, s.limited + ${dialect.count("s.bans")} AS refused, s.now
  FROM current AS c CROSS JOIN split AS s
)
INSERT INTO ${dialect.into} (bucket, ${RATE_LIMIT_COLUMNS})
SELECT bucket, window0_start, window0_count, window1_start, window1_count, refusals, banned_until,
  ${greatest}(banned_until, window0_start + length0, window1_start + length1), admitted, refused, now
FROM next
${dialect.upsert}
RETURNING bucket, window0_start, window0_count, window1_start, window1_count, banned_until, admitted, refused, decided_at`;
}
