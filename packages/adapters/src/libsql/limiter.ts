import type { Client } from "@libsql/client";
import type { Decision, HitInput, RateLimiter, WindowState } from "@petstore/core";
import { database, type Statement } from "./_database.js";

/** Every this many hits, one hit also deletes a bounded number of expired buckets. */
const SWEEP_EVERY = 1_000;
const SWEEP_BATCH = 1_000;
/**
 * A bucket is swept only this long after it expired, so a process whose clock is late by less
 * than this still finds the counters it would have counted against.
 */
const SWEEP_GRACE_MS = 60_000;

/** What a hit decided, stored in the row so that `RETURNING` can report it. */
const ADMITTED = 0;
const REFUSED = 1;
const DURING_BAN = 2;

/**
 * The whole decision as one statement, so it is atomic across connections and processes.
 * `current`: the bucket as stored (or an empty one), each window moved forward to the
 * current one but never back (max), so a late clock cannot reset a counter; refusals count
 * within window 0 and reset with it. `decided`: admit only if no window is full and there is no
 * ban. `next`: an admission counts in both windows; a refusal consumes nothing but counts
 * toward the ban; a hit during a ban changes nothing.
 */
const HIT_SQL_NAMED = `
WITH
current AS (
  SELECT
    max(coalesce(r.window0_start, 0), :start0) AS window0_start,
    CASE WHEN r.window0_start >= :start0 THEN r.window0_count ELSE 0 END AS window0_count,
    CASE WHEN r.window0_start >= :start0 THEN r.refusals ELSE 0 END AS refusals,
    max(coalesce(r.window1_start, 0), :start1) AS window1_start,
    CASE WHEN r.window1_start >= :start1 THEN r.window1_count ELSE 0 END AS window1_count,
    coalesce(r.banned_until, 0) AS banned_until
  FROM (SELECT 1) LEFT JOIN rate_limits AS r ON r.bucket = :bucket
),
decided AS (
  SELECT *,
    CASE
      WHEN banned_until > :now THEN ${DURING_BAN}
      WHEN window0_count >= :limit0 OR window1_count >= :limit1 THEN ${REFUSED}
      ELSE ${ADMITTED}
    END AS outcome
  FROM current
),
next AS (
  SELECT
    window0_start,
    window0_count + (outcome = ${ADMITTED}) AS window0_count,
    window1_start,
    window1_count + (outcome = ${ADMITTED}) AS window1_count,
    refusals + (outcome = ${REFUSED}) AS refusals,
    CASE WHEN outcome = ${REFUSED} AND refusals + 1 > :threshold THEN :now + :banMs ELSE banned_until END AS banned_until,
    outcome
  FROM decided
)
INSERT INTO rate_limits (bucket, window0_start, window0_count, window1_start, window1_count, refusals, banned_until, expires_at, outcome)
SELECT :bucket, window0_start, window0_count, window1_start, window1_count, refusals, banned_until,
  max(banned_until, window0_start + :length0, window1_start + :length1), outcome
FROM next
WHERE true
ON CONFLICT (bucket) DO UPDATE SET
  window0_start = excluded.window0_start, window0_count = excluded.window0_count,
  window1_start = excluded.window1_start, window1_count = excluded.window1_count,
  refusals = excluded.refusals, banned_until = excluded.banned_until,
  expires_at = excluded.expires_at, outcome = excluded.outcome
RETURNING window0_start, window0_count, window1_start, window1_count, banned_until, outcome`;

/**
 * Named in the text for the reader, bound by number (`:now` becomes `?2`): the `libsql` package
 * takes longer to bind ten values by name than to run the statement.
 */
const HIT_PARAMETERS = ["bucket", "now", "start0", "start1", "length0", "length1", "limit0", "limit1", "threshold", "banMs"];
const HIT_SQL = HIT_SQL_NAMED.replace(/:(\w+)/g, (_, name: string) => {
  const index = HIT_PARAMETERS.indexOf(name);
  if (index < 0) throw new Error(`HIT_SQL: unknown parameter :${name}`);
  return `?${index + 1}`;
});

const SWEEP_SQL = "DELETE FROM rate_limits WHERE bucket IN (SELECT bucket FROM rate_limits WHERE expires_at <= ? LIMIT ?)";

/**
 * Fixed-window counters in a libSQL database (run `migrate` first), exact when many processes
 * share it: each hit is one `INSERT ... ON CONFLICT DO UPDATE ... RETURNING` that decides every
 * window all-or-nothing. Expired buckets are deleted by every 1000th hit (no timers).
 * Takes exactly two windows (core passes the minute window, then the day window); the ban
 * counts refusals within the first.
 */
export function libsqlLimiter(options: { client: Client }): RateLimiter {
  const db = database(options.client);
  let hits = 0;

  async function hit({ bucket, windows, ban, now }: HitInput): Promise<Decision> {
    if (windows.length !== 2) throw new TypeError(`libsqlLimiter takes exactly two windows, got ${windows.length}`);
    const lengths = windows.map((w) => w.seconds * 1000);
    const starts = lengths.map((length) => now - (now % length));
    const statement: Statement = {
      sql: HIT_SQL,
      // In the order of HIT_PARAMETERS.
      args: [bucket, now, starts[0]!, starts[1]!, lengths[0]!, lengths[1]!, windows[0]!.limit, windows[1]!.limit, ban.threshold, ban.seconds * 1000],
      oneRow: true,
    };
    const sweeping = ++hits % SWEEP_EVERY === 0;
    // A count is no acknowledged write: it must survive the process, while an fsync per batch
    // of hits would cost more than the hits (see WriteOptions for what a power cut may forget).
    const [result] = await db.write(sweeping ? [statement, { sql: SWEEP_SQL, args: [now - SWEEP_GRACE_MS, SWEEP_BATCH] }] : [statement], {
      survives: "process-crash",
    });
    const row = result!.rows[0]!;

    const outcome = Number(row.outcome);
    const stored = [
      { start: Number(row.window0_start), count: Number(row.window0_count) },
      { start: Number(row.window1_start), count: Number(row.window1_count) },
    ];
    const states: WindowState[] = windows.map((w, i) => ({
      name: w.name,
      limit: w.limit,
      remaining: Math.max(0, w.limit - stored[i]!.count),
      resetAt: stored[i]!.start + lengths[i]!,
      exceeded: outcome === REFUSED && stored[i]!.count >= w.limit,
    }));
    const bannedUntil = Number(row.banned_until);
    return bannedUntil > now ? { allowed: false, windows: states, bannedUntil } : { allowed: outcome === ADMITTED, windows: states };
  }

  return { hit };
}
