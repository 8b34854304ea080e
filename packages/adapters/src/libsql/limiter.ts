import type { Decision, HitInput, RateLimiter, WindowSpec, WindowState } from "@petstore/core";
import type { Row } from "./_engine.js";
import { engineOf, type LibsqlSource } from "./_source.js";

/** Every this many statements, one also deletes a bounded number of expired buckets. */
const SWEEP_EVERY = 1_000;
const SWEEP_BATCH = 1_000;
/**
 * A bucket is swept only this long after it expired, so a process whose clock is late by less
 * than this still finds the counters it would have counted against.
 */
const SWEEP_GRACE_MS = 60_000;

/**
 * The whole decision for `:hits` hits on one bucket (usually 1; more when requests of one turn
 * of the event loop share a bucket, see below) as one statement, so it is atomic across
 * connections and processes, and decides exactly what as many single hits in a row would.
 * `current`: the bucket as stored (or an empty one), each window moved forward to the current
 * one but never back (max), so a late clock cannot reset a counter; refusals count within
 * window 0 and reset with it. `decided`: during a ban nothing is admitted; otherwise as many
 * hits as both windows have room for. `split`: the refused hits are refused as over the limit
 * until one of them is the threshold's crossing refusal, which bans the bucket: it and those
 * after it are answered as banned. `next`: admissions count in both windows; refusals
 * consume nothing but count toward the ban, the crossing one too; a ban changes nothing else.
 * `admitted` and `refused` (the refusals counted, the crossing one too) are kept in the row
 * only so that `RETURNING` can report them.
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
    banned_until > :now AS banned,
    CASE WHEN banned_until > :now THEN 0
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
    CASE WHEN bans THEN :now + :banMs ELSE banned_until END AS banned_until,
    admitted,
    limited + bans AS refused
  FROM split
)
INSERT INTO rate_limits (bucket, window0_start, window0_count, window1_start, window1_count, refusals, banned_until, expires_at, admitted, refused)
SELECT :bucket, window0_start, window0_count, window1_start, window1_count, refusals, banned_until,
  max(banned_until, window0_start + :length0, window1_start + :length1), admitted, refused
FROM next
WHERE true
ON CONFLICT (bucket) DO UPDATE SET
  window0_start = excluded.window0_start, window0_count = excluded.window0_count,
  window1_start = excluded.window1_start, window1_count = excluded.window1_count,
  refusals = excluded.refusals, banned_until = excluded.banned_until,
  expires_at = excluded.expires_at, admitted = excluded.admitted, refused = excluded.refused
RETURNING window0_start, window0_count, window1_start, window1_count, banned_until, admitted, refused`;

/**
 * Named in the text for the reader, bound by number (`:now` becomes `?2`): the `libsql` package
 * takes longer to bind ten values by name than to run the statement.
 */
const HIT_PARAMETERS = ["bucket", "now", "hits", "start0", "start1", "length0", "length1", "limit0", "limit1", "threshold", "banMs"];
const HIT_SQL = HIT_SQL_NAMED.replace(/:(\w+)/g, (_, name: string) => {
  const index = HIT_PARAMETERS.indexOf(name);
  if (index < 0) throw new Error(`HIT_SQL: unknown parameter :${name}`);
  return `?${index + 1}`;
});

const SWEEP_SQL = "DELETE FROM rate_limits WHERE bucket IN (SELECT bucket FROM rate_limits WHERE expires_at <= ? LIMIT ?)";

/** One hit waiting for the statement that decides it together with the others of its group. */
interface Waiting {
  resolve: (decision: Decision) => void;
  reject: (error: unknown) => void;
}

/** Hits on one bucket with the same windows and ban, decided by one statement. */
interface Group {
  /** The latest clock among the hits: they are all decided at it (one turn apart at most). */
  now: number;
  waiting: Waiting[];
}

/**
 * Fixed-window counters in a libSQL database (run `migrate` first), exact when many processes
 * share it: each decision is one `INSERT ... ON CONFLICT DO UPDATE ... RETURNING` that decides
 * every window all-or-nothing. On a local engine the hits on one bucket that arrive before the
 * next write batch begins (one turn of the event loop: a busy key's concurrent requests) join
 * one group, whose statement is made when the batch runs and decides them in their order of
 * arrival. Expired buckets are deleted by every 1000th statement (no timers). Takes exactly two
 * windows (core passes the minute window, then the day window); the ban counts refusals within
 * the first.
 */
export function libsqlLimiter(source: LibsqlSource): RateLimiter {
  const db = engineOf(source);
  /** Groups whose statement has not been made yet, by bucket, windows and ban. */
  const open = new Map<string, Group>();
  let statements = 0;

  function decide(group: Group, windows: readonly WindowSpec[], row: Row): void {
    const now = group.now;
    const lengths = windows.map((w) => w.seconds * 1000);
    const starts = [Number(row.window0_start), Number(row.window1_start)];
    const counts = [Number(row.window0_count), Number(row.window1_count)];
    const bannedUntil = Number(row.banned_until);
    const admitted = Number(row.admitted);
    const refused = Number(row.refused);
    const banned = bannedUntil > now;
    group.waiting.forEach(({ resolve }, i) => {
      // In order of arrival: the admitted, then the counted refusals (the last of which set the
      // ban, if there is one: no refusal counts during a ban), then those refused during the ban.
      const allowed = i < admitted;
      const counted = !allowed && i < admitted + refused;
      // An admitted hit saw the counts as they were after the admissions up to its own.
      const later = allowed ? admitted - i - 1 : 0;
      const states: WindowState[] = windows.map((w, k) => ({
        name: w.name,
        limit: w.limit,
        remaining: Math.max(0, w.limit - (counts[k]! - later)),
        resetAt: starts[k]! + lengths[k]!,
        exceeded: counted && counts[k]! >= w.limit,
      }));
      const duringBan = banned && !allowed && (!counted || i === admitted + refused - 1);
      resolve(duringBan ? { allowed: false, windows: states, bannedUntil } : { allowed, windows: states });
    });
  }

  function hit({ bucket, windows, ban, now }: HitInput): Promise<Decision> {
    if (windows.length !== 2) return Promise.reject(new TypeError(`libsqlLimiter takes exactly two windows, got ${windows.length}`));
    const lengths = windows.map((w) => w.seconds * 1000);
    const starts = lengths.map((length) => now - (now % length));
    const name = `${bucket}\n${starts[0]}\n${starts[1]}\n${windows[0]!.limit}\n${windows[1]!.limit}\n${ban.threshold}\n${ban.seconds}`;
    return new Promise<Decision>((resolve, reject) => {
      const joined = open.get(name);
      if (joined !== undefined) {
        joined.waiting.push({ resolve, reject });
        joined.now = Math.max(joined.now, now);
        return;
      }
      const group: Group = { now, waiting: [{ resolve, reject }] };
      open.set(name, group);
      const sweeping = ++statements % SWEEP_EVERY === 0;
      // Made when the write runs: at once over a client, at the batch on a local engine.
      const unit = () => {
        // From now on the statement is made: a later hit starts a group of its own.
        open.delete(name);
        // In the order of HIT_PARAMETERS.
        const args = [bucket, group.now, group.waiting.length, starts[0]!, starts[1]!, lengths[0]!, lengths[1]!, windows[0]!.limit, windows[1]!.limit, ban.threshold, ban.seconds * 1000];
        const decision = { sql: HIT_SQL, args, oneRow: true };
        return sweeping ? [decision, { sql: SWEEP_SQL, args: [group.now - SWEEP_GRACE_MS, SWEEP_BATCH] }] : [decision];
      };
      // A count is no acknowledged write: it must survive the process, while an fsync per batch
      // of hits would cost more than the hits (see WriteOptions for what a power cut may forget).
      db.write(unit, { survives: "process-crash" }).then(
        ([result]) => decide(group, windows, result!.rows[0]!),
        (error: unknown) => {
          if (open.get(name) === group) open.delete(name);
          for (const waiting of group.waiting) waiting.reject(error);
        },
      );
    });
  }

  return { hit };
}
