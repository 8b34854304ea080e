import type { Decision, HitInput, RateLimiter, WindowState } from "@petstore/core";
import type { Row, SqlEngine, Statement } from "./engine.js";
import { groupedWrites } from "./grouped-writes.js";

/** Every this many statements, one also deletes a bounded number of expired buckets. */
const SWEEP_EVERY = 1_000;
const SWEEP_BATCH = 1_000;
/**
 * A bucket is swept only this long after it expired, so a process whose clock is late by less
 * than this still finds the counters it would have counted against.
 */
const SWEEP_GRACE_MS = 60_000;

/** What one statement decides: `hits` hits on one bucket, all at `now`. */
export interface HitArgs {
  bucket: string;
  now: number;
  hits: number;
  /** Start of the current minute and day windows (Unix ms). */
  start0: number;
  start1: number;
  length0: number;
  length1: number;
  limit0: number;
  limit1: number;
  threshold: number;
  banMs: number;
}

/** The order in which a hit statement binds its arguments (see `hitText`, `hitValues`). */
const HIT_PARAMETERS: readonly (keyof HitArgs)[] = ["bucket", "now", "hits", "start0", "start1", "length0", "length1", "limit0", "limit1", "threshold", "banMs"];

/**
 * A hit statement written with named parameters for the reader (`:now`), as the engine binds
 * it: each name replaced by `placeholder(its position from 1, name)`; a `::` cast is no name.
 */
export function hitText(named: string, placeholder: (position: number, name: keyof HitArgs) => string): string {
  return named.replace(/(?<!:):([a-zA-Z]\w*)/g, (_, name: string) => {
    const index = HIT_PARAMETERS.indexOf(name as keyof HitArgs);
    if (index < 0) throw new Error(`hit statement: unknown parameter :${name}`);
    return placeholder(index + 1, name as keyof HitArgs);
  });
}

/** The arguments of a hit statement made by `hitText`, in their positions. */
export const hitValues = (args: HitArgs) => HIT_PARAMETERS.map((name) => args[name]);

/** An engine's SQL for the limiter's two statements. */
export interface LimiterStatements {
  /**
   * The whole decision for `args.hits` hits on one bucket, as ONE atomic statement (an
   * `INSERT ... ON CONFLICT DO UPDATE ... RETURNING`) that decides exactly what as many single
   * hits in a row would, returning `window0_start, window0_count, window1_start,
   * window1_count, banned_until` after it, `admitted` (how many of the hits were admitted) and
   * `refused` (how many refusals it counted toward the ban, the crossing one too).
   */
  hit(args: HitArgs): Statement;
  /** Deletes at most `batch` buckets that expired before `before`. */
  sweep(before: number, batch: number): Statement;
}

/**
 * Each hit's decision, in order of arrival, from the bucket's row after the statement:
 * the admitted, then the counted refusals (the last of which set the ban, if there is one: no
 * refusal counts during a ban), then those refused during the ban.
 */
function decisionsOf(input: HitInput, now: number, hits: number, row: Row): Decision[] {
  const { windows } = input;
  const starts = [Number(row.window0_start), Number(row.window1_start)];
  const counts = [Number(row.window0_count), Number(row.window1_count)];
  const bannedUntil = Number(row.banned_until);
  const admitted = Number(row.admitted);
  const refused = Number(row.refused);
  const banned = bannedUntil > now;
  return Array.from({ length: hits }, (_, i) => {
    const allowed = i < admitted;
    const counted = !allowed && i < admitted + refused;
    // An admitted hit saw the counts as they were after the admissions up to its own.
    const later = allowed ? admitted - i - 1 : 0;
    const states: WindowState[] = windows.map((w, k) => ({
      name: w.name,
      limit: w.limit,
      remaining: Math.max(0, w.limit - (counts[k]! - later)),
      resetAt: starts[k]! + w.seconds * 1000,
      exceeded: counted && counts[k]! >= w.limit,
    }));
    const duringBan = banned && !allowed && (!counted || i === admitted + refused - 1);
    return duringBan ? { allowed: false, windows: states, bannedUntil } : { allowed, windows: states };
  });
}

/**
 * Fixed-window counters in a SQL database, exact when many processes share it: each decision
 * is one statement (see `LimiterStatements.hit`) that decides every window all-or-nothing. The
 * hits on one bucket that arrive before the engine makes the statement (one turn of the event
 * loop: a busy key's concurrent requests) are decided together by it, in their order of
 * arrival (see `groupedWrites`). Expired buckets are deleted by every 1000th statement (no
 * timers). Takes exactly two windows (core passes the minute window, then the day window);
 * the ban counts refusals within the first.
 */
export function sqlLimiter(db: SqlEngine, statements: LimiterStatements, name: string): RateLimiter {
  let made = 0;
  const join = groupedWrites<HitInput, Decision>(db, {
    make(items) {
      const { bucket, windows, ban } = items[0]!;
      // The latest clock among the hits: they are all decided at it (one turn apart at most).
      const now = Math.max(...items.map((item) => item.now));
      const [length0, length1] = windows.map((w) => w.seconds * 1000) as [number, number];
      const hit = statements.hit({
        bucket,
        now,
        hits: items.length,
        start0: now - (now % length0),
        start1: now - (now % length1),
        length0,
        length1,
        limit0: windows[0]!.limit,
        limit1: windows[1]!.limit,
        threshold: ban.threshold,
        banMs: ban.seconds * 1000,
      });
      return ++made % SWEEP_EVERY === 0 ? [hit, statements.sweep(now - SWEEP_GRACE_MS, SWEEP_BATCH)] : [hit];
    },
    answer(results, items) {
      const now = Math.max(...items.map((item) => item.now));
      return decisionsOf(items[0]!, now, items.length, results[0]!.rows[0]!);
    },
    // A count is no acknowledged write: it must survive the process, while an fsync per batch
    // of hits would cost more than the hits (see WriteOptions for what a power cut may forget).
    options: { survives: "process-crash" },
  });

  return {
    hit(input) {
      const { bucket, windows, ban, now } = input;
      if (windows.length !== 2) return Promise.reject(new TypeError(`${name} takes exactly two windows, got ${windows.length}`));
      const [length0, length1] = windows.map((w) => w.seconds * 1000) as [number, number];
      // Hits share a statement only when it decides the same windows, limits and ban.
      const key = `${bucket}\n${now - (now % length0)}\n${now - (now % length1)}\n${windows[0]!.limit}\n${windows[1]!.limit}\n${ban.threshold}\n${ban.seconds}`;
      return join(key, input);
    },
  };
}
