import {
  type BucketState,
  CLOCK_STEP_MS,
  type Decision,
  type HitInput,
  type RateLimiter,
  type WindowPair,
  type WindowState,
} from "@petstore/core";
import { boundByNumber, type Row, type SqlEngine, type Statement, type Value } from "./engine.js";
import { groupedWrites } from "./grouped-writes.js";
import { type SharedHitDialect, sharedHitSql } from "./limiter-sql.js";

/** Every this many statements, one also deletes a bounded number of expired buckets. */
const SWEEP_EVERY = 1_000;
const SWEEP_BATCH = 1_000;

/** What one statement decides: `hits` hits on one bucket, all at one instant. */
interface HitArgs {
  bucket: string;
  /** The instant to decide at; null: the store's clock, read by the statement (see store-clock.ts). */
  now: number | null;
  hits: number;
  length0: number;
  length1: number;
  limit0: number;
  limit1: number;
  threshold: number;
  banMs: number;
}

/**
 * What a dialect writes of the limiter (see `LimiterStatements`): its hit statement, with the
 * named parameters of `HitArgs` for the reader (`:now`); its store's clock in SQL (see
 * store-clock.ts); and how it writes a numbered parameter (`?1`, `$1::bigint`): every engine
 * binds by number, and faster (the `libsql` package takes longer to bind ten values by name
 * than to run the hit). The other statements are plain SQL, the same in both dialects.
 */
export interface LimiterDialect {
  placeholder(position: number, name: string): string;
  now: string;
  hit: string;
  /** How it writes the hit statement over several buckets at once (see `LimiterStatements.sharedHit`). */
  sharedHit: SharedHitDialect;
  /**
   * Where rows are locked one statement at a time (PostgreSQL), a statement that makes and
   * locks the rows of `:bucket0`...`:bucket{n-1}` in that order before the shared hit reads
   * them; none where a write transaction holds the whole database (SQLite).
   */
  lock?(n: number): string;
}

/** What a shared hit decides: `hits` hits on `buckets[0]` (refusals and the ban) and on the others (shared), at one instant. */
interface SharedHitArgs {
  buckets: readonly { bucket: string; length0: number; length1: number; limit0: number; limit1: number }[];
  now: number | null;
  hits: number;
  threshold: number;
  banMs: number;
}

/** The named parameters of a shared hit's buckets, by position (`bucket0`, `length0_0`...), for `numbered`. */
function sharedHitValues({ buckets, ...rest }: SharedHitArgs): Record<string, Value> {
  const values: Record<string, Value> = { ...rest };
  buckets.forEach((b, i) => {
    values[`bucket${i}`] = b.bucket;
    values[`length0_${i}`] = b.length0;
    values[`length1_${i}`] = b.length1;
    values[`limit0_${i}`] = b.limit0;
    values[`limit1_${i}`] = b.limit1;
  });
  return values;
}

/** The statements of a dialect, each bound by number. */
export function limiterStatements(dialect: LimiterDialect): LimiterStatements {
  const bound = <A>(named: string, oneRow: boolean) => boundByNumber<A>(named, dialect.placeholder, oneRow);
  const now = `coalesce(:now, ${dialect.now})`;
  // The expiry again outside the subquery: under READ COMMITTED a row another transaction
  // refreshed while the sweep waited for it is checked again against the outer WHERE only.
  const sweep = bound<{ now: number | null; batch: number }>(
    `DELETE FROM rate_limits WHERE bucket IN (SELECT bucket FROM rate_limits WHERE expires_at <= ${now} LIMIT :batch) AND expires_at <= ${now}`,
    false,
  );
  // The bucket as a hit finds it (see the dialects' hit: a bucket last decided more than
  // CLOCK_STEP_MS after the instant read is left out, as new; the instant is never before its
  // last; each window moved forward to the current one), counting nothing.
  const peek = bound<PeekArgs>(
    `SELECT now AS decided_at,
  CASE WHEN window0_start >= start0 THEN window0_start ELSE start0 END AS window0_start,
  CASE WHEN window0_start >= start0 THEN window0_count ELSE 0 END AS window0_count,
  CASE WHEN window1_start >= start1 THEN window1_start ELSE start1 END AS window1_start,
  CASE WHEN window1_start >= start1 THEN window1_count ELSE 0 END AS window1_count,
  coalesce(banned_until, 0) AS banned_until
FROM (
  SELECT *, now - now % :length0 AS start0, now - now % :length1 AS start1
  FROM (
    SELECT CASE WHEN r.decided_at > t.read THEN r.decided_at ELSE t.read END AS now,
      r.window0_start, r.window0_count, r.window1_start, r.window1_count, r.banned_until
    FROM (SELECT ${now} AS read) AS t
    LEFT JOIN rate_limits AS r ON r.bucket = :bucket AND r.decided_at - t.read <= ${CLOCK_STEP_MS}
  ) AS found
) AS k`,
    true,
  );
  // Banned at the instant a hit would decide at, by a clock that did not step back since.
  const unban = bound<{ bucket: string; now: number | null }>(
    `UPDATE rate_limits SET banned_until = 0, refusals = 0
WHERE bucket = :bucket AND banned_until > ${now} AND banned_until > decided_at AND decided_at - ${now} <= ${CLOCK_STEP_MS}
RETURNING bucket`,
    false,
  );
  /** A statement over `n` buckets, made once per `n` (a hit shares one or two). */
  const perCount = (make: (n: number) => string) => {
    const made = new Map<number, (values: Record<string, Value>) => Statement>();
    return (n: number) => {
      let statement = made.get(n);
      if (!statement) made.set(n, (statement = bound<Record<string, Value>>(make(n), false)));
      return statement;
    };
  };
  const sharedHit = perCount((n) => sharedHitSql(n, dialect.sharedHit));
  const lock = dialect.lock && perCount(dialect.lock);
  return {
    hit: bound<HitArgs>(dialect.hit, true),
    sharedHit(args) {
      const hit = sharedHit(args.buckets.length)(sharedHitValues(args));
      if (!lock) return [hit];
      // Rows locked in one order by every hit (by name), so two hits never wait for each other's.
      const names = args.buckets.map((b) => b.bucket).sort();
      const values = Object.fromEntries(names.map((name, i) => [`bucket${i}`, name]));
      return [lock(names.length)(values), hit];
    },
    sweep: (now, batch) => sweep({ now, batch }),
    peek,
    unban: (bucket, now) => unban({ bucket, now }),
  };
}

/** The limiter's statements, as an engine runs them. */
export interface LimiterStatements {
  /**
   * The whole decision for `args.hits` hits on one bucket, as ONE atomic statement (an
   * `INSERT ... ON CONFLICT DO UPDATE ... RETURNING`) that decides exactly what as many single
   * hits in a row would, at one instant (`args.now`, else the store's clock), returning
   * `window0_start, window0_count, window1_start, window1_count, banned_until` after it,
   * `admitted` (how many of the hits were admitted), `refused` (how many refusals it counted
   * toward the ban, the crossing one too) and `decided_at` (the instant).
   */
  hit(args: HitArgs): Statement;
  /**
   * The whole decision for `args.hits` hits on a bucket and the buckets it shares, as one
   * atomic write (the last of these statements decides; a dialect may lock the rows first):
   * admitted as many as every window of every bucket has room for, counted in all of them;
   * refusals counted toward the ban of bucket 0 alone, as `hit` counts them. Returns a row per
   * bucket, with `bucket` and the columns `hit` returns.
   */
  sharedHit(args: SharedHitArgs): Statement[];
  /** Deletes at most `batch` buckets whose windows and ban are over at `now` (null: the store's clock). */
  sweep(now: number | null, batch: number): Statement;
  /**
   * The bucket as a hit at `now` (null: the store's clock) would find it, counting nothing:
   * one row of `window0_start, window0_count, window1_start, window1_count, banned_until,
   * decided_at`, each window moved to the current one (zeros for a bucket never seen).
   */
  peek(args: PeekArgs): Statement;
  /** Ends the bucket's ban at `now` (null: the store's clock) and forgets its refusals; a row when it was banned. */
  unban(bucket: string, now: number | null): Statement;
}

/** What `LimiterStatements.peek` reads: the bucket at an instant, in two windows of these lengths (ms). */
interface PeekArgs {
  bucket: string;
  now: number | null;
  length0: number;
  length1: number;
}

/**
 * Each hit's decision, in order of arrival, from the rows of its buckets after the statement
 * (`rows[0]` the hit's own bucket, then its shared ones): the admitted, then the counted
 * refusals (the last of which set the ban, if there is one: no refusal counts during a ban, so
 * a ban after counted refusals is theirs), then those refused during the ban.
 */
function decisionsOf(input: HitInput, hits: number, rows: readonly Row[]): Decision[] {
  const own = rows[0]!;
  const now = Number(own.decided_at);
  const bannedUntil = Number(own.banned_until);
  const admitted = Number(own.admitted);
  const refused = Number(own.refused);
  const banned = bannedUntil > now;
  const crossing = admitted + refused - 1;
  const buckets = [input.windows, ...(input.shared ?? []).map((s) => s.windows)];
  return Array.from({ length: hits }, (_, i) => {
    const allowed = i < admitted;
    const counted = !allowed && i < admitted + refused;
    // An admitted hit saw the counts as they were after the admissions up to its own.
    const later = allowed ? admitted - i - 1 : 0;
    const [states, ...shared] = buckets.map((windows, b) => {
      const row = rows[b]!;
      const starts = [Number(row.window0_start), Number(row.window1_start)];
      const counts = [Number(row.window0_count), Number(row.window1_count)];
      return windows.map(
        (w, k): WindowState => ({
          name: w.name,
          limit: w.limit,
          remaining: Math.max(0, w.limit - (counts[k]! - later)),
          resetAt: starts[k]! + w.seconds * 1000,
          exceeded: counted && counts[k]! >= w.limit,
        }),
      );
    });
    const decision: Decision = { allowed, windows: states!, now };
    if (input.shared) decision.shared = shared;
    if (!banned || allowed || (counted && i !== crossing)) return decision;
    decision.bannedUntil = bannedUntil;
    if (counted) decision.banStarted = true;
    return decision;
  });
}

const windowsKey = (windows: WindowPair) =>
  `${windows[0]!.seconds}\n${windows[1]!.seconds}\n${windows[0]!.limit}\n${windows[1]!.limit}`;

/** A hit as the SQL limiter takes it: at `now` when a test's clock gives one, else at the store's instant (null). */
export type TimedHit = HitInput & { now: number | null };

/** The SQL limiter: `RateLimiter` over timed hits (the adapters' limiters read the test's clock, if any, into `now`). */
export interface SqlLimiter {
  hit(input: TimedHit): Promise<Decision>;
  peek(input: TimedHit): Promise<BucketState>;
  unban(bucket: string, now: number | null): Promise<boolean>;
}

/**
 * Fixed-window counters in a SQL database, exact when many processes share it: each decision
 * is one statement (see `LimiterStatements.hit`) that decides every window all-or-nothing, at
 * the instant the database's clock gives it. The hits on one bucket that arrive before the
 * engine makes the statement (one turn of the event loop: a busy key's concurrent requests)
 * are decided together by it at one instant, in their order of arrival (see `groupedWrites`).
 * Expired buckets are deleted by every 1000th statement (no timers), by the same clock. Takes
 * the two windows of a `WindowPair` (the minute's, then the day's); the ban counts
 * refusals within the first.
 */
export function sqlLimiter(db: SqlEngine, statements: LimiterStatements): SqlLimiter {
  let made = 0;
  const join = groupedWrites<TimedHit, Decision>(db, {
    make(items) {
      const { bucket, windows, ban, now, shared } = items[0]!;
      if (shared) {
        const hit = statements.sharedHit({
          buckets: [{ bucket, windows }, ...shared].map((b) => ({
            bucket: b.bucket,
            length0: b.windows[0]!.seconds * 1000,
            length1: b.windows[1]!.seconds * 1000,
            limit0: b.windows[0]!.limit,
            limit1: b.windows[1]!.limit,
          })),
          now,
          hits: items.length,
          threshold: ban.threshold,
          banMs: ban.seconds * 1000,
        });
        return ++made % SWEEP_EVERY === 0 ? [...hit, statements.sweep(now, SWEEP_BATCH)] : hit;
      }
      const hit = statements.hit({
        bucket,
        now,
        hits: items.length,
        length0: windows[0]!.seconds * 1000,
        length1: windows[1]!.seconds * 1000,
        limit0: windows[0]!.limit,
        limit1: windows[1]!.limit,
        threshold: ban.threshold,
        banMs: ban.seconds * 1000,
      });
      return ++made % SWEEP_EVERY === 0 ? [hit, statements.sweep(now, SWEEP_BATCH)] : [hit];
    },
    answer(results, items) {
      const input = items[0]!;
      if (!input.shared) return decisionsOf(input, items.length, [results[0]!.rows[0]!]);
      // The shared hit is the one statement that returns rows (a lock and a sweep return none), in any order.
      const { rows } = results.find((result) => result.rows.length > 0)!;
      const byName = new Map(rows.map((row) => [String(row.bucket), row]));
      const names = [input.bucket, ...input.shared.map((b) => b.bucket)];
      return decisionsOf(
        input,
        items.length,
        names.map((name) => byName.get(name)!),
      );
    },
    // A count is no acknowledged write: it must survive the process, while an fsync per batch
    // of hits would cost more than the hits (see WriteOptions for what a power cut may forget).
    options: { survives: "process-crash" },
    oneAtATime: true,
  });

  return {
    hit(input) {
      const { bucket, windows, ban, now } = input;
      // Hits share a statement only when it decides the same buckets, windows, limits and ban at the same instant.
      let key = `${bucket}\n${now}\n${windowsKey(windows)}\n${ban.threshold}\n${ban.seconds}`;
      if (input.shared) for (const shared of input.shared) key += `\n${shared.bucket}\n${windowsKey(shared.windows)}`;
      return join(key, input);
    },
    async peek({ bucket, windows, now }) {
      const lengths = windows.map((w) => w.seconds * 1000);
      // The latest committed row: an operator looking at a key sees what the last hit left.
      const { rows } = await db.read(statements.peek({ bucket, now, length0: lengths[0]!, length1: lengths[1]! }));
      const row = rows[0]!;
      const starts = [Number(row.window0_start), Number(row.window1_start)];
      const counts = [Number(row.window0_count), Number(row.window1_count)];
      const bannedUntil = Number(row.banned_until);
      const at = Number(row.decided_at);
      const states: WindowState[] = windows.map((w, k) => ({
        name: w.name,
        limit: w.limit,
        remaining: Math.max(0, w.limit - counts[k]!),
        resetAt: starts[k]! + lengths[k]!,
        exceeded: false,
      }));
      return bannedUntil > at ? { windows: states, bannedUntil, now: at } : { windows: states, now: at };
    },
    async unban(bucket, now) {
      const [ended] = await db.write([statements.unban(bucket, now)]);
      return ended!.rows.length > 0;
    },
  };
}

/** The SQL limiter as a `RateLimiter`: every call at `clock`'s instant when a test gives one, else at the store's. */
export function timedBy(limiter: SqlLimiter, clock: (() => number) | undefined): Required<RateLimiter> {
  const now = () => (clock ? clock() : null);
  return {
    hit: clock ? (input) => limiter.hit({ ...input, now: clock() }) : (input) => limiter.hit({ ...input, now: null }),
    peek: (input) => limiter.peek({ ...input, now: now() }),
    unban: (bucket) => limiter.unban(bucket, now()),
  };
}
