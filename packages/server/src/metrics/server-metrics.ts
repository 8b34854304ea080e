import process from "node:process";
import type { ResponseEvent } from "@petstore/core";
import { exposition, Histogram, Series } from "./_exposition.js";

/** Seconds; from half a millisecond (a cached GET) to 10 s (the longest a request may wait). */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Units (requests' writes) per group-committed batch. */
const BATCH_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500];
/** Methods kept as they are; any other becomes OTHER, so a client cannot add label values. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

export interface ServerMetricsOptions {
  build: { version: string; commit: string; target: string };
  /** Unix ms (the start time) and a monotonic clock, ms (the uptime); injectable for tests. */
  clock?: () => number;
  monotonic?: () => number;
  /** Resident set size in bytes; injectable for tests. */
  rss?: () => number;
}

/** What `onResponse` and the server's own answers report, and the label it is counted under. */
type AnswerEvent = Pick<ResponseEvent, "response" | "durationMs" | "plan" | "errorCode" | "keyCache" | "banStarted"> & {
  method: string;
  /** Bounded: a route pattern under the base path, `/healthz`, `/docs`, or `other`. */
  route: string;
};

/** The server's metrics: fed by every answer and by the libSQL database, rendered for `GET /metrics`. */
export interface ServerMetrics {
  observe(event: AnswerEvent): void;
  /** Around every request: how many are being answered now. */
  requestStarted(): void;
  requestFinished(): void;
  /** For a local libSQL file: each group commit and each WAL fsync. */
  storage: {
    onBatch(batch: { units: number; commitMs: number }): void;
    onFsync(ms: number): void;
    onCheckpointFailed(reason: string): void;
  };
  /** The latest measured offset of this server's clock from a store's (`database`, `limiter`), seconds. */
  clockOffset(store: string, seconds: number): void;
  /** A store's clock (`database`, `limiter`) stepped by more than 1 s, either way. */
  clockStep(store: string): void;
  render(): string;
}

/**
 * The `petstore_*` metrics. Labels take bounded values only: route patterns (never raw paths),
 * methods, statuses, plans (`anonymous` for callers without a valid key); never key material.
 * @example const metrics = serverMetrics({ build: BUILD_INFO }); metrics.observe(event); metrics.render();
 */
export function serverMetrics(options: ServerMetricsOptions): ServerMetrics {
  const clock = options.clock ?? Date.now;
  const monotonic = options.monotonic ?? (() => performance.now());
  const rss = options.rss ?? (() => process.memoryUsage.rss());
  const startedAt = clock();
  const startedAtMs = monotonic();
  let inFlight = 0;

  const requests = new Series(
    "petstore_http_requests_total",
    "Answers by route pattern, method and status.",
    "counter",
    ["route", "method", "status"],
  );
  const latency = new Histogram(
    "petstore_http_request_duration_seconds",
    "Time from receiving a request to its answer, by route pattern.",
    LATENCY_BUCKETS,
    ["route"],
  );
  const refusals = new Series(
    "petstore_rate_limit_refusals_total",
    "429 answers by plan and reason (rate_limited, temporarily_banned).",
    "counter",
    ["plan", "reason"],
  );
  const bans = new Series("petstore_bans_total", "Bans begun, by plan.", "counter", ["plan"]);
  const unauthorized = new Series(
    "petstore_unauthorized_total",
    "401 answers: no key, or a malformed, unknown or revoked one.",
    "counter",
  );
  const checkpointFailures = new Series(
    "petstore_libsql_checkpoint_failures_total",
    "Checkpoints of a WAL grown past 64 MB that failed: the database file takes no more pages.",
    "counter",
  );
  const storageFailures = new Series(
    "petstore_storage_failures_total",
    "503 answers: storage busy, unreachable or failing (health checks included).",
    "counter",
  );
  const keyCache = new Series(
    "petstore_key_cache_lookups_total",
    "API key verifications by outcome: hit (cached) or miss (storage asked).",
    "counter",
    ["result"],
  );
  const batchUnits = new Histogram(
    "petstore_libsql_write_batch_units",
    "Atomic writes per group-committed libSQL batch (local files); the creates of one batch are one multi-row INSERT, counted once.",
    BATCH_BUCKETS,
  );
  const commit = new Histogram(
    "petstore_libsql_commit_seconds",
    "Time to run and commit one libSQL write batch (local files).",
    LATENCY_BUCKETS,
  );
  const fsync = new Histogram(
    "petstore_libsql_fsync_seconds",
    "Time of one fsync of the libSQL write-ahead log (local files).",
    LATENCY_BUCKETS,
  );
  const build = new Series(
    "petstore_build_info",
    "The running build: version, git commit, compile target. Always 1.",
    "gauge",
    ["version", "commit", "target"],
  );
  build.set([options.build.version, options.build.commit, options.build.target], 1);
  const memory = new Series("petstore_process_resident_memory_bytes", "Resident set size of the process.", "gauge");
  const uptime = new Series(
    "petstore_process_uptime_seconds",
    "Seconds since the metrics began (server start).",
    "gauge",
  );
  const startTime = new Series("petstore_process_start_time_seconds", "Unix time the server started.", "gauge");
  startTime.set([], startedAt / 1000);
  const open = new Series(
    "petstore_http_requests_in_flight",
    "Requests being answered now (Bun and Deno expose no connection count).",
    "gauge",
  );
  const clockOffset = new Series(
    "petstore_clock_offset_seconds",
    "This server's clock minus its store's (database, limiter), as last measured; the stores' clocks decide limits, bans and expiries.",
    "gauge",
    ["store"],
  );
  const clockSteps = new Series(
    "petstore_clock_steps_total",
    "Steps of a store's clock (database, limiter) by more than 1 s either way, against this server's monotonic clock.",
    "counter",
    ["store"],
  );
  clockSteps.inc(["database"], 0);
  for (const result of ["hit", "miss"]) keyCache.inc([result], 0);
  unauthorized.inc([], 0);
  storageFailures.inc([], 0);
  checkpointFailures.inc([], 0);

  return {
    observe(event) {
      const status = event.response.status;
      const method = METHODS.has(event.method) ? event.method : "OTHER";
      requests.inc([event.route, method, String(status)]);
      latency.observe([event.route], event.durationMs / 1000);
      const plan = event.plan ?? "anonymous";
      if (event.errorCode === "rate_limited" || event.errorCode === "temporarily_banned")
        refusals.inc([plan, event.errorCode]);
      if (event.banStarted) bans.inc([plan]);
      if (status === 401) unauthorized.inc();
      if (status === 503) storageFailures.inc();
      if (event.keyCache !== undefined) keyCache.inc([event.keyCache]);
    },
    requestStarted: () => void inFlight++,
    requestFinished: () => void inFlight--,
    storage: {
      onBatch: ({ units, commitMs }) => {
        batchUnits.observe([], units);
        commit.observe([], commitMs / 1000);
      },
      onFsync: (ms) => fsync.observe([], ms / 1000),
      onCheckpointFailed: () => checkpointFailures.inc(),
    },
    clockOffset: (store, seconds) => clockOffset.set([store], seconds),
    clockStep: (store) => clockSteps.inc([store]),
    render() {
      memory.set([], rss());
      uptime.set([], (monotonic() - startedAtMs) / 1000);
      open.set([], inFlight);
      return exposition([
        requests,
        latency,
        refusals,
        bans,
        unauthorized,
        storageFailures,
        checkpointFailures,
        keyCache,
        batchUnits,
        commit,
        fsync,
        build,
        memory,
        uptime,
        startTime,
        open,
        clockOffset,
        clockSteps,
      ]);
    },
  };
}
