import process from "node:process";
import {
  type ApiKeys,
  createPetstore,
  hashApiKey,
  isWellFormedApiKey,
  issueApiKey,
  trustedProxies,
} from "@petstore/core";
import { BUILD_INFO, VERSION } from "../version.js";
import { metricsFetch } from "../metrics/metrics-fetch.js";
import { type ServerMetrics, serverMetrics } from "../metrics/server-metrics.js";
import { displayLimiter, type LimiterConfig, openLimiter } from "../open-limiter.js";
import { type DbConfig, openStorage, type Storage } from "../open-storage.js";
import type { ParsedArgs } from "../parse-args.js";
import { health } from "../health.js";
import { type RunningServer, type ServerFetch, serve } from "../serve.js";
import { serverFetch } from "../server-fetch.js";
import { UsageError } from "../usage-error.js";
import type { Command, Env, Io } from "./_command.js";
import { dbConfig, displayDb, integerSetting, limiterConfig, setting } from "./_options.js";

const BASE_PATH = "/v1";
/** How long in-flight requests get to finish after SIGTERM or SIGINT. */
const GRACE_MS = 10_000;
/** The highest per-minute or per-day limit a key may have, as in `keys create`. */
const MAX_LIMIT = 1_000_000_000;

/** A key the server makes sure exists at start: how a `:memory:` database gets its first key. */
interface BootstrapKey {
  key: string;
  perMinute: number;
  perDay: number;
}

interface ServeConfig {
  port: number;
  host: string;
  db: DbConfig;
  /** Where the rate limits live when not in the database (`--limiter`). */
  limiter: LimiterConfig | undefined;
  trustProxy: string[];
  /** Development mode: a database without an active key gets a Free key, printed once. */
  dev: boolean;
  bootstrap: BootstrapKey | undefined;
  /** Where `GET /metrics` is served; undefined: nowhere (the default). */
  metricsListen: { host: string; port: number } | undefined;
}

/** `HOST:PORT` or `[IPv6]:PORT`, as `--metrics-listen` takes it. */
function listenAddress(text: string, flag: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d+)$/.exec(text);
  if (!match) throw new UsageError(`${flag} must be HOST:PORT (e.g. 127.0.0.1:9464), not '${text}'`);
  return { host: (match[1] ?? match[2])!, port: integerSetting(match[3]!, `${flag}'s port`, 0, 65_535) };
}

/**
 * A variable's value; undefined when unset, empty, or unreadable: Deno throws on a variable
 * its --allow-env does not list, and one the operator did not let through was not given.
 */
function optionalEnv(env: Env, variable: string): string | undefined {
  try {
    const value = env[variable];
    return value === "" ? undefined : value;
  } catch {
    return undefined;
  }
}

/** From the environment only: key material never goes on argv, where `ps` shows it. */
function bootstrapConfig(env: Env): BootstrapKey | undefined {
  const key = optionalEnv(env, "PETSTORE_BOOTSTRAP_KEY");
  const perMinute = optionalEnv(env, "PETSTORE_BOOTSTRAP_PER_MINUTE");
  const perDay = optionalEnv(env, "PETSTORE_BOOTSTRAP_PER_DAY");
  if (key === undefined) {
    if (perMinute !== undefined || perDay !== undefined) {
      throw new UsageError("PETSTORE_BOOTSTRAP_PER_MINUTE and PETSTORE_BOOTSTRAP_PER_DAY need PETSTORE_BOOTSTRAP_KEY");
    }
    return undefined;
  }
  // The value is a secret, even a mistyped one: the message never repeats it.
  if (!isWellFormedApiKey(key)) {
    throw new UsageError("PETSTORE_BOOTSTRAP_KEY must be an API key: psk_ then 38 letters or digits, the last 6 a checksum");
  }
  if (perMinute === undefined || perDay === undefined) {
    throw new UsageError("PETSTORE_BOOTSTRAP_KEY needs PETSTORE_BOOTSTRAP_PER_MINUTE and PETSTORE_BOOTSTRAP_PER_DAY (its enterprise limits)");
  }
  return {
    key,
    perMinute: integerSetting(perMinute, "PETSTORE_BOOTSTRAP_PER_MINUTE", 1, MAX_LIMIT),
    perDay: integerSetting(perDay, "PETSTORE_BOOTSTRAP_PER_DAY", 1, MAX_LIMIT),
  };
}

function serveConfig(args: ParsedArgs, env: Env): ServeConfig {
  const dev = args.switches.has("dev");
  const port = setting(args, "port", env, "PETSTORE_PORT");
  // Development mode stays on loopback unless told otherwise.
  const host = setting(args, "host", env, "PETSTORE_HOST")?.value ?? (dev ? "127.0.0.1" : "0.0.0.0");
  const trustProxy = (args.values["trust-proxy"] ?? "").split(",").map((cidr) => cidr.trim()).filter(Boolean);
  try {
    trustedProxies(trustProxy);
  } catch (error) {
    throw new UsageError(`--trust-proxy: ${(error as Error).message}`);
  }
  const apiPort = port === undefined ? 8080 : integerSetting(port.value, port.source, 0, 65_535);
  const metricsListen = args.values["metrics-listen"] === undefined ? undefined : listenAddress(args.values["metrics-listen"], "--metrics-listen");
  if (metricsListen && sharesAddress(metricsListen, { host, port: apiPort })) {
    throw new UsageError(`--metrics-listen ${args.values["metrics-listen"]} is the API's own address: give the metrics listener a port of its own`);
  }
  return {
    port: apiPort,
    host,
    db: dbConfig(args, env),
    limiter: limiterConfig(args, env),
    trustProxy,
    dev,
    bootstrap: bootstrapConfig(env),
    metricsListen,
  };
}

const WILDCARDS = new Set(["0.0.0.0", "::", "[::]"]);

/** Two listeners that would compete for one port: the same port (not 0) on the same or a wildcard address. */
function sharesAddress(a: { host: string; port: number }, b: { host: string; port: number }): boolean {
  if (a.port === 0 || a.port !== b.port) return false;
  return a.host === b.host || WILDCARDS.has(a.host) || WILDCARDS.has(b.host);
}

/** Counts the requests being answered; only when metrics are on (it adds a promise per request). */
function counted(fetch: ServerFetch, metrics: ServerMetrics | undefined): ServerFetch {
  if (!metrics) return fetch;
  return async (request, clientAddress) => {
    metrics.requestStarted();
    try {
      return await fetch(request, clientAddress);
    } finally {
      metrics.requestFinished();
    }
  };
}

/** The metrics listener, when asked for: started before the API's, so it is there for the first request. */
async function startMetrics(config: ServeConfig, metrics: ServerMetrics | undefined, io: Io): Promise<RunningServer | undefined> {
  if (!config.metricsListen || !metrics) return undefined;
  const { host, port } = config.metricsListen;
  const server = await serve({ fetch: metricsFetch(metrics), hostname: host, port }).catch((error: unknown) => {
    throw new Error(`cannot listen for metrics on ${host} port ${port}: ${error instanceof Error ? error.message : String(error)}`);
  });
  logLine(io, "metrics listening", { url: `${localUrl(server.hostname, server.port)}/metrics`, host: server.hostname, port: server.port });
  return server;
}

function logLine(io: Io, event: string, fields: Record<string, unknown> = {}): void {
  io.out(JSON.stringify({ time: new Date().toISOString(), level: "info", event, ...fields }));
}

/** The URL a person on this machine can paste: a wildcard address becomes loopback. */
function localUrl(host: string, port: number): string {
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`;
}

/**
 * Stores the bootstrap key as an enterprise key unless the database already has it (by
 * hash): an existing key keeps its limits, and a revoked one stays revoked.
 */
async function ensureBootstrapKey(keys: ApiKeys, bootstrap: BootstrapKey, io: Io): Promise<void> {
  const hash = await hashApiKey(bootstrap.key);
  let record = await keys.findByHash(hash);
  const created = record === undefined;
  if (record === undefined) {
    const limits = { plan: "enterprise", perMinute: bootstrap.perMinute, perDay: bootstrap.perDay, label: "bootstrap" } as const;
    try {
      record = (await issueApiKey(keys, limits, { key: bootstrap.key })).record;
    } catch (error) {
      // Another process starting on the same database may have stored it a moment ago.
      record = await keys.findByHash(hash);
      if (record === undefined) throw error;
    }
  }
  logLine(io, "bootstrap key", { keyId: record.id, created, revoked: record.revokedAt !== undefined });
}

/** Production never creates keys: it warns when nobody could use the API. Development makes one. */
async function checkKeys(storage: Storage, config: ServeConfig, io: Io): Promise<string | undefined> {
  const keys = storage.adapters.keys;
  if ((await keys.list()).some((record) => record.revokedAt === undefined)) {
    if (config.dev) {
      io.out(
        `Development mode: ${displayDb(config.db.url)} already has an active API key, so none was created. ` +
          `Make another: petstore keys create --plan free (from a checkout: npm run petstore -- keys create --plan free)`,
      );
    }
    return undefined;
  }
  if (config.dev) return (await issueApiKey(keys, { plan: "free", label: "development" })).key;
  io.err(
    JSON.stringify({
      time: new Date().toISOString(),
      level: "warn",
      message: `The database has no active API key, so every API request gets 401. Create one: petstore keys create --plan free --db ${displayDb(config.db.url)}`,
    }),
  );
  return undefined;
}

function printDevKey(io: Io, key: string, url: string): void {
  io.out("");
  io.out("Development mode: the database had no API key, so a Free key was created. It is shown only this once:");
  io.out("");
  io.out(`    ${key}`);
  io.out("");
  io.out("Try it:");
  io.out("");
  io.out(`    curl -H 'Authorization: Bearer ${key}' ${url}${BASE_PATH}/pets`);
  io.out("");
}

function stopRequested(): Promise<string> {
  return new Promise((resolve) => {
    for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => resolve(signal));
  });
}

/** `petstore serve`: migrations, then the API on Bun or Deno until SIGTERM or SIGINT. */
export const serveCommand: Command = {
  spec: {
    name: "serve",
    flags: { port: "value", host: "value", db: "value", limiter: "value", "limiter-fail-open": "switch", "trust-proxy": "value", "metrics-listen": "value", dev: "switch" },
    positionals: [],
  },
  usage: "petstore serve [--port 8080] [--host 0.0.0.0] [--db URL] [--limiter redis://HOST] [--limiter-fail-open] [--trust-proxy CIDRS] [--metrics-listen HOST:PORT] [--dev]",
  help: `Serves the Pet Store API under /v1, and GET /healthz (200 when the database, and Redis
with --limiter, take reads and writes now, else 503 with the reason). Runs the database migrations first, and refuses to
start on a database it cannot write. Logs one JSON line per request on stdout. On SIGTERM
or SIGINT it stops accepting connections, lets in-flight requests finish (up to 10 s), closes
the database and exits 0.

  --port N             port to listen on, 0 for any free one (default 8080; env PETSTORE_PORT)
  --host ADDRESS       address to listen on (default 0.0.0.0; env PETSTORE_HOST)
  --db URL             file:PATH (default file:petstore.db), :memory:, libsql://HOST,
                       http(s)://HOST or postgres://USER@HOST/DATABASE (env PETSTORE_DB; token
                       in PETSTORE_DB_AUTH_TOKEN, a Postgres password in PGPASSWORD or the URL)
  --limiter URL        keep the rate limits in Redis instead of the database:
                       redis://HOST[:PORT][/DB] or rediss:// (env PETSTORE_LIMITER; password in
                       PETSTORE_LIMITER_PASSWORD). A request waits for Redis at most
                       PETSTORE_LIMITER_TIMEOUT_MS (default 1000), then gets a 503
  --limiter-fail-open  while Redis fails, admit requests without limits instead of 503s, and
                       log it (env PETSTORE_LIMITER_FAIL_OPEN=1)
  --trust-proxy CIDRS  comma-separated proxy ranges whose X-Forwarded-For names the client
                       (default: none, the socket address is the client)
  --metrics-listen HOST:PORT
                       serve Prometheus metrics at GET /metrics on this address, its own
                       listener apart from the API (default: off), e.g. 127.0.0.1:9464
  --dev                development mode: listen on 127.0.0.1 unless --host says otherwise,
                       and when the database has no active key create a Free key and print it

Bootstrap key (off by default; environment only, so the key never shows in the process list):
  PETSTORE_BOOTSTRAP_KEY=psk_...       at start, store this key as an enterprise key unless the
                                       database already has it (then it keeps its limits), e.g.
                                       to give a --db :memory: server its first key. Any key
                                       'petstore keys create --db :memory: --json' prints will do
  PETSTORE_BOOTSTRAP_PER_MINUTE=N      its requests per minute (required with the key)
  PETSTORE_BOOTSTRAP_PER_DAY=N         its requests per day (required with the key)
  Under Deno, list these in --allow-env, else they are not seen.`,
  run: async (args, env, io) => {
    const config = serveConfig(args, env);
    const metrics = config.metricsListen ? serverMetrics({ build: BUILD_INFO }) : undefined;
    const warn = (event: string, fields: Record<string, unknown>) => io.err(JSON.stringify({ time: new Date().toISOString(), level: "warn", event, ...fields }));
    const storage = await openStorage(config.db, {
      ...metrics?.storage,
      // A storage failure no request meets: logged, counted, and reported by /healthz.
      onCheckpointFailed: (reason) => {
        warn("checkpoint failed", { reason });
        metrics?.storage.onCheckpointFailed(reason);
      },
    });
    const redis = config.limiter && (await openLimiter(config.limiter, warn).catch((error: unknown) => {
      storage.close();
      throw error;
    }));
    try {
      // A server that cannot write would answer every create with a 503: refuse to start.
      await storage.check().catch((error: unknown) => {
        throw new Error(`cannot serve ${displayDb(config.db.url)}: ${error instanceof Error ? error.message : String(error)}`);
      });
      if (config.bootstrap !== undefined) await ensureBootstrapKey(storage.adapters.keys, config.bootstrap, io);
      const devKey = await checkKeys(storage, config, io);
      const api = { ...storage.adapters, ...(redis && { limiter: redis.limiter }), trustProxy: config.trustProxy };
      // A limiter failing open keeps the API serving: /healthz stays 200 and says so.
      const limiterCheck = redis ? () => redis.limiter.check() : undefined;
      const check = limiterCheck && !config.limiter!.failOpen ? () => Promise.all([storage.check(), limiterCheck()]).then(() => {}) : storage.check;
      const status = health(check, Date.now, config.limiter?.failOpen ? limiterCheck : undefined);
      const fetch = counted(serverFetch({ api, basePath: BASE_PATH, health: status, log: io.out, ...(metrics ? { metrics } : {}) }), metrics);
      const metricsServer = await startMetrics(config, metrics, io);
      const server = await serve({ fetch, hostname: config.host, port: config.port }).catch(async (error: unknown) => {
        await metricsServer?.stop(0);
        throw new Error(`cannot listen on ${config.host} port ${config.port}: ${error instanceof Error ? error.message : String(error)}`);
      });
      const stop = stopRequested();
      const url = localUrl(server.hostname, server.port);
      const limiter = config.limiter && { limiter: displayLimiter(config.limiter.url), failOpen: config.limiter.failOpen };
      logLine(io, "listening", { url, host: server.hostname, port: server.port, db: displayDb(config.db.url), ...limiter, version: VERSION });
      if (devKey !== undefined) printDevKey(io, devKey, url);
      const signal = await stop;
      logLine(io, "stopping", { signal, graceMs: GRACE_MS });
      await server.stop(GRACE_MS);
      await metricsServer?.stop(0);
      logLine(io, "stopped");
      return 0;
    } finally {
      redis?.close();
      storage.close();
    }
  },
};
