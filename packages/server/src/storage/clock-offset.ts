import { CLOCK_STEP_MS, type RateLimiter } from "@petstore/core";

/** Past this, a server's clock is said to be off from its store's. */
const OFF_MS = 1_000;
/** A reading whose round trip took longer than this says too little about the offset: skipped. */
const MAX_ROUND_TRIP_MS = 1_000;
/** How often the clocks are read again after the first time (at start). */
export const CLOCK_CHECK_EVERY_MS = 30_000;
/** A reading of a store's clock this old is replaced by the next one, however imprecise: NTP slews the clocks apart slowly. */
const READING_KEPT_MS = 10_000;

/** A store whose clock decides what the fleet shares (the database, the limiter's Redis). */
export interface ClockSource {
  /** Bounded label value: `database` or `limiter`. */
  store: string;
  /** The store as it may be shown (a URL without credentials). */
  shown: string;
  /** The store's clock now, Unix ms (its health check's answer). */
  now(): Promise<number>;
  /** Its clock is this machine's (a database file): it can step, but it cannot be off from this server's. */
  local?: boolean;
}

export interface ClockOffsets {
  /** Reads every store's clock once: its offset (a change across 1 s is logged) and whether it stepped. */
  measure(): Promise<void>;
  /**
   * A reading of `store`'s clock a request made (a limiter's decision, `Decision.now`), between
   * `sentAt` and `answeredAt` by the monotonic clock: watched for a step, so that one is seen at
   * the next request rather than at the next check.
   */
  observe(store: string, storeNow: number, sentAt: number, answeredAt: number): void;
  /** The latest offset of each store measured, seconds: this server's clock minus the store's. */
  offsets(): ReadonlyMap<string, number>;
  /** What `/healthz` says while a clock is off by more than 1 s; undefined otherwise. */
  notice(): string | undefined;
}

export interface ClockOffsetOptions {
  /** One JSON log line: `warn` when a clock goes off, `info` when it is back. */
  log: (level: "warn" | "info", event: string, fields: Record<string, unknown>) => void;
  /** This server's wall clock (Unix ms) and a monotonic one (ms); injectable for tests. */
  clock?: () => number;
  monotonic?: () => number;
  /** Hears every offset measured (seconds), e.g. for `petstore_clock_offset_seconds`. */
  onOffset?: (store: string, seconds: number) => void;
  /** Hears every step of a store's clock (seconds, back below 0), e.g. for `petstore_clock_steps_total`. */
  onStep?: (store: string, seconds: number) => void;
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/**
 * How far this server's clock is from the clocks of the stores it shares with its fleet, and
 * whether a store's clock stepped. Nothing shared depends on the offset (the stores decide
 * every window, ban and expiry by their own clocks), but a server whose clock is off logs and
 * stamps the wrong times, so it is said: one log line when a store's offset passes 1 s, one
 * when it is back, the offsets for `petstore_clock_offset_seconds`, and a notice for
 * `/healthz` (which stays 200). The offset is the store's reading against the middle of the
 * round trip; a reading that took over 1 s is skipped, as is a store that fails (its health
 * check says so). A step is the store's clock moving more than CLOCK_STEP_MS (beyond what the
 * two round trips leave unknown) against this process's monotonic clock between two readings,
 * the checks' and the requests' (`observe`): said once, with its size, and heard by `onStep`;
 * the store's decisions start over for it (see `RateLimiter`), and this says why. A local
 * store (a file) has only steps.
 */
export function clockOffsets(sources: readonly ClockSource[], options: ClockOffsetOptions): ClockOffsets {
  const clock = options.clock ?? Date.now;
  const monotonic = options.monotonic ?? (() => performance.now());
  const latest = new Map<string, number>();
  const off = new Set<string>();
  /**
   * Each store's clock minus the monotonic clock, as the reading kept says it: how uncertain
   * that was (half its round trip, ms) and when it was made (monotonic).
   */
  const bases = new Map<string, { base: number; uncertainty: number; at: number }>();
  const shown = new Map(sources.map((source) => [source.store, source.shown]));

  /** Says a step of the store's clock since the reading kept, if there was one; keeps the better reading. */
  function watchSteps(store: string, storeNow: number, sentAt: number, answeredAt: number): void {
    const reading = {
      base: storeNow - (sentAt + answeredAt) / 2,
      uncertainty: (answeredAt - sentAt) / 2,
      at: answeredAt,
    };
    const kept = bases.get(store);
    const stepMs = kept === undefined ? 0 : reading.base - kept.base;
    const stepped = kept !== undefined && Math.abs(stepMs) > CLOCK_STEP_MS + reading.uncertainty + kept.uncertainty;
    if (
      kept === undefined ||
      stepped ||
      reading.uncertainty <= kept.uncertainty ||
      reading.at - kept.at > READING_KEPT_MS
    )
      bases.set(store, reading);
    if (!stepped) return;
    options.onStep?.(store, stepMs / 1000);
    options.log("warn", "clock step", {
      store,
      at: shown.get(store),
      stepSeconds: seconds(stepMs),
      note: `the ${store}'s clock stepped ${stepMs < 0 ? "back" : "forward"} ${seconds(Math.abs(stepMs))} s: ${
        stepMs < 0
          ? "each rate-limit bucket it decided on before starts over at its next request (no window or ban outlasts its length)"
          : "windows, bans and idempotency records it keeps ended up to that much early"
      }; check its time sync`,
    });
  }

  async function measureOne(source: ClockSource): Promise<void> {
    const [sentAt, sentAtMs] = [clock(), monotonic()];
    const storeNow = await source.now();
    const roundTrip = monotonic() - sentAtMs;
    if (roundTrip > MAX_ROUND_TRIP_MS) return;
    watchSteps(source.store, storeNow, sentAtMs, sentAtMs + roundTrip);
    if (source.local) return;
    const offsetMs = sentAt + roundTrip / 2 - storeNow;
    latest.set(source.store, offsetMs / 1000);
    options.onOffset?.(source.store, offsetMs / 1000);
    const fields = { store: source.store, at: source.shown, offsetSeconds: seconds(offsetMs) };
    if (Math.abs(offsetMs) > OFF_MS && !off.has(source.store)) {
      off.add(source.store);
      options.log("warn", "clock offset", {
        ...fields,
        note: `this server's clock is ${seconds(Math.abs(offsetMs))} s ${offsetMs > 0 ? "ahead of" : "behind"} the ${source.store}'s; limits, bans and expiries follow the ${source.store}'s clock, but this server's logs and Date headers do not: fix its time sync`,
      });
    } else if (Math.abs(offsetMs) <= OFF_MS && off.delete(source.store)) {
      options.log("info", "clock offset back within 1 s", fields);
    }
  }

  return {
    measure: () => Promise.all(sources.map((source) => measureOne(source).catch(() => {}))).then(() => {}),
    observe: watchSteps,
    offsets: () => latest,
    notice() {
      const notes = [...off].map((store) => {
        const offset = latest.get(store)!;
        return `this server's clock is ${seconds(Math.abs(offset * 1000))} s ${offset > 0 ? "ahead of" : "behind"} the ${store}'s (which decides limits, bans and expiries)`;
      });
      return notes.length > 0 ? notes.join("; ") : undefined;
    },
  };
}

/**
 * The limiter, each of its decisions also a reading of its store's clock for `clocks` (a step
 * is then seen at the next request). The rest of the limiter is as it was.
 */
export function observedLimiter<L extends RateLimiter>(
  limiter: L,
  store: string,
  clocks: Pick<ClockOffsets, "observe">,
  monotonic: () => number = () => performance.now(),
): L {
  return {
    ...limiter,
    hit: (input) => {
      const sentAt = monotonic();
      return limiter.hit(input).then((decision) => {
        clocks.observe(store, decision.now, sentAt, monotonic());
        return decision;
      });
    },
  };
}
