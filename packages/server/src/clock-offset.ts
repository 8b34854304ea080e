import { CLOCK_STEP_MS } from "@petstore/core";

/** Past this, a server's clock is said to be off from its store's. */
const OFF_MS = 1_000;
/** A reading whose round trip took longer than this says too little about the offset: skipped. */
const MAX_ROUND_TRIP_MS = 1_000;
/** How often the clocks are read again after the first time (at start): a step is said within this. */
export const CLOCK_CHECK_EVERY_MS = 5_000;

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
 * two round trips leave unknown) against this process's monotonic clock between two readings:
 * said once, with its size, and heard by `onStep`; the store's decisions start over for it
 * (see `RateLimiter`), and this says why. A local store (a file) has only steps.
 */
export function clockOffsets(sources: readonly ClockSource[], options: ClockOffsetOptions): ClockOffsets {
  const clock = options.clock ?? Date.now;
  const monotonic = options.monotonic ?? (() => performance.now());
  const latest = new Map<string, number>();
  const off = new Set<string>();
  /** Each store's clock minus the monotonic clock at its last reading, and how uncertain that was (ms). */
  const bases = new Map<string, { base: number; uncertainty: number }>();

  /** Says a step of the store's clock since its last reading, if there was one. */
  function watchSteps(source: ClockSource, storeNow: number, readAt: number, roundTrip: number): void {
    const now = { base: storeNow - readAt, uncertainty: roundTrip / 2 };
    const before = bases.get(source.store);
    bases.set(source.store, now);
    if (before === undefined) return;
    const stepMs = now.base - before.base;
    if (Math.abs(stepMs) <= CLOCK_STEP_MS + now.uncertainty + before.uncertainty) return;
    options.onStep?.(source.store, stepMs / 1000);
    options.log("warn", "clock step", {
      store: source.store,
      at: source.shown,
      stepSeconds: seconds(stepMs),
      note: `the ${source.store}'s clock stepped ${stepMs < 0 ? "back" : "forward"} ${seconds(Math.abs(stepMs))} s: ${
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
    watchSteps(source, storeNow, sentAtMs + roundTrip / 2, roundTrip);
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
