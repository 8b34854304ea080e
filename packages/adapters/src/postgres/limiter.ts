import { CLOCK_STEP_MS, type RateLimiter } from "@petstore/core";
import { limiterStatements, sqlLimiter, timedBy } from "../_sql/limiter.js";
import { currentBucket, RATE_LIMIT_COLUMNS } from "../_sql/limiter-sql.js";
import { POSTGRES_CLOCK_NOW, POSTGRES_NOW, type StoreClockOptions } from "../_sql/store-clock.js";
import type { PostgresSource } from "./_client.js";
import { engineOf } from "./_engine.js";

/**
 * The decision for `:hits` hits from a bucket as `source` gives it (columns `window0_start`,
 * `window0_count`, `window1_start`, `window1_count`, `refusals`, `banned_until`, all NULL for
 * a new bucket) and `last`, its last decision's instant (NULL for a new one): the bucket's row
 * after them, in the order of RATE_LIMIT_COLUMNS. The same steps as libSQL's statement (see
 * libsql/limiter.ts for each): `k` the instant (the server's clock as read when the row is
 * locked, unless `:now` gives one), whether the bucket is `kept` or starts over, and the
 * windows, `c` the bucket moved to the current windows, `d` banned or how many are admitted,
 * `s` how many refusals count and whether one crosses the threshold, `n` the next row.
 */
const decision = (source: string, last: string) => `
SELECT n.window0_start, n.window0_count, n.window1_start, n.window1_count, n.refusals, n.banned_until,
  greatest(n.banned_until, n.window0_start + :length0, n.window1_start + :length1), n.admitted, n.refused, k.now
FROM (
  SELECT now, now - now % :length0 AS start0, now - now % :length1 AS start1, kept
  FROM (
    SELECT CASE WHEN kept THEN greatest(read, ${last}) ELSE read END AS now, kept
    FROM (
      SELECT read, coalesce(${last} - read <= ${CLOCK_STEP_MS}, false) AS kept
      FROM (SELECT coalesce(:now, ${POSTGRES_CLOCK_NOW}) AS read) AS t
    ) AS u
  ) AS v
  -- A fence: flattened, every step that reads k would get a copy of its expressions, and
  -- each hit would take four times as long to plan.
  OFFSET 0
) AS k
CROSS JOIN LATERAL (
  SELECT
    ${currentBucket("b")}
  FROM (${source}) AS b
) AS c
CROSS JOIN LATERAL (
  SELECT c.banned_until > k.now AS banned,
    CASE WHEN c.banned_until > k.now THEN 0
      ELSE greatest(0, least(:hits, :limit0 - c.window0_count, :limit1 - c.window1_count)) END AS admitted
) AS d
CROSS JOIN LATERAL (
  SELECT
    CASE WHEN d.banned THEN 0
      -- A ban of no length is over at once: every refusal is an ordinary one.
      WHEN :banMs <= 0 THEN :hits - d.admitted
      ELSE least(:hits - d.admitted, greatest(0, :threshold - c.refusals)) END AS limited,
    :banMs > 0 AND NOT d.banned AND :hits - d.admitted > greatest(0, :threshold - c.refusals) AS bans
) AS s
CROSS JOIN LATERAL (
  SELECT
    c.window0_start,
    c.window0_count + d.admitted AS window0_count,
    c.window1_start,
    c.window1_count + d.admitted AS window1_count,
    c.refusals + s.limited + s.bans::int AS refusals,
    CASE WHEN s.bans THEN k.now + :banMs ELSE c.banned_until END AS banned_until,
    d.admitted,
    s.limited + s.bans::int AS refused
) AS n`;

/**
 * ONE statement decides the hits, atomic across connections and processes: a new bucket is
 * inserted as decided from nothing; an existing one is decided again in `DO UPDATE` from the
 * row as it is then, locked and latest (under READ COMMITTED, `ON CONFLICT DO UPDATE` sees the
 * newest committed version and holds its lock to the commit), so concurrent statements on
 * one bucket are decided one after the other and never from a stale read, each at the clock
 * as read once it holds the lock: in the order they are decided.
 */
const HIT_SQL_NAMED = `
INSERT INTO rate_limits AS r (bucket, ${RATE_LIMIT_COLUMNS})
SELECT :bucket, x.* FROM (${decision(
  "SELECT NULL::bigint AS window0_start, NULL::bigint AS window0_count, NULL::bigint AS window1_start, NULL::bigint AS window1_count, NULL::bigint AS refusals, NULL::bigint AS banned_until",
  "NULL::bigint",
)}) AS x
ON CONFLICT (bucket) DO UPDATE SET (${RATE_LIMIT_COLUMNS}) = (${decision(
  "SELECT r.window0_start, r.window0_count, r.window1_start, r.window1_count, r.refusals, r.banned_until",
  "r.decided_at",
)})
RETURNING window0_start, window0_count, window1_start, window1_count, banned_until, admitted, refused, decided_at`;

/**
 * Makes the rows of a shared hit's buckets (empty ones, as new: a `decided_at` of 0 keeps no
 * instant) and locks them, in the order given (`sharedHit` gives them by name, the same order
 * for every hit): a hit on a key and its account then never waits for a lock another such hit
 * holds while that one waits for its own, and the hit's statement reads rows no one else can
 * change before the commit.
 */
const lockSql = (n: number) => `
INSERT INTO rate_limits AS r (bucket, ${RATE_LIMIT_COLUMNS})
VALUES ${Array.from({ length: n }, (_, i) => `(:bucket${i}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)`).join(", ")}
ON CONFLICT (bucket) DO UPDATE SET decided_at = r.decided_at`;

/** Bound by number with their types (`:now` becomes `$1::bigint`); a shared hit's `:bucket0`... are text too. */
const TYPES: Record<string, string> = { bucket: "text", batch: "integer" };

/** The Postgres limiter's statements (exported for its tests, which run one at a chosen moment). */
export const POSTGRES_LIMITER_STATEMENTS = limiterStatements({
  placeholder: (position, name) => `$${position}::${/^bucket\d+$/.test(name) ? "text" : (TYPES[name] ?? "bigint")}`,
  now: POSTGRES_NOW,
  hit: HIT_SQL_NAMED,
  // On rows `lockSql` locked, the instant read once (`read`), after the locks.
  sharedHit: {
    clock: POSTGRES_CLOCK_NOW,
    greatest: "greatest",
    least: "least",
    false: "false",
    count: (flag) => `${flag}::int`,
    materialized: ["read"],
    into: "rate_limits AS r",
    upsert: `ON CONFLICT (bucket) DO UPDATE SET (${RATE_LIMIT_COLUMNS}) = (excluded.window0_start, excluded.window0_count,
  excluded.window1_start, excluded.window1_count, excluded.refusals, excluded.banned_until, excluded.expires_at,
  excluded.admitted, excluded.refused, excluded.decided_at)`,
  },
  lock: lockSql,
});

/**
 * Fixed-window counters in Postgres (run `migratePostgres` first), exact when many processes
 * share the database: each decision is one `INSERT ... ON CONFLICT DO UPDATE ... RETURNING`
 * that decides both windows, refusals and the ban exactly as the libSQL and memory limiters
 * do, at the PostgreSQL server's clock (or `options.clock`'s, in tests). The hits on one
 * bucket of one turn of the event loop are decided by one statement (one round trip). Expired
 * buckets are deleted by every 1000th statement, by the same clock.
 * @example const limiter = postgresLimiter({ sql });
 */
export function postgresLimiter(source: PostgresSource, options: StoreClockOptions = {}): RateLimiter {
  return timedBy(sqlLimiter(engineOf(source), POSTGRES_LIMITER_STATEMENTS), options.clock);
}
