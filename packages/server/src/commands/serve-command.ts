import { BUILD_INFO, VERSION } from "../cli/version.js";
import { CLOCK_CHECK_EVERY_MS, clockOffsets, observedLimiter } from "../storage/clock-offset.js";
import { serverMetrics } from "../metrics/server-metrics.js";
import { openLimiter } from "../limiter/open-limiter.js";
import { openStorage, storageFailure } from "../storage/open-storage.js";
import { shownUrl } from "../messages/shown-url.js";
import { health } from "../http/health.js";
import { serve } from "../http/serve.js";
import { serverFetch } from "../http/server-fetch.js";
import type { Command } from "./_command.js";
import { outageLog } from "./serve/outage-log.js";
import { ensureBootstrapKey } from "./serve/bootstrap-key.js";
import { agreeOnLimiter } from "./serve/agree-on-limiter.js";
import { pastableDb } from "./_options.js";
import { serveConfig } from "./serve/config.js";
import { listenFailure } from "./serve/listen-failure.js";
import { checkKeys, printDevKey } from "./serve/dev-key.js";
import { localUrl, logLine } from "./serve/log.js";
import { counted, startMetrics } from "./serve/metrics-listener.js";
import { startAdmin } from "./serve/admin-listener.js";
import { GRACE_MS, stopRequested } from "./serve/signals.js";

const BASE_PATH = "/v1";

/** `petstore serve`: migrations, then the API on Bun or Deno until SIGTERM or SIGINT. */
export const serveCommand: Command = {
  spec: {
    name: "serve",
    flags: {
      port: "value",
      host: "value",
      db: "value",
      limiter: "value",
      "limiter-fail-open": "switch",
      "change-limiter": "switch",
      "trust-proxy": "value",
      "metrics-listen": "value",
      "admin-listen": "value",
      "admin-listen-public": "switch",
      "admin-host": "value",
      "rolled-key-link": "value",
      dev: "switch",
    },
    positionals: [],
  },
  usage:
    "petstore serve [--port 8080] [--host 0.0.0.0] [--db URL] [--limiter redis[+cluster|+sentinel]://HOST...] [--limiter-fail-open] [--change-limiter] [--trust-proxy CIDRS] [--metrics-listen HOST:PORT] [--admin-listen [HOST:]PORT [--admin-listen-public] [--admin-host NAMES]] [--rolled-key-link URL] [--dev]",
  help: `Serves the Pet Store API under /v1, and GET /healthz (200 when the database, and Redis
with --limiter, take reads and writes now, else 503 with the reason). Runs the database migrations first, and refuses to
start on a database it cannot write. Logs one JSON line per request on stdout. On SIGTERM
or SIGINT it stops accepting connections, lets in-flight requests finish (up to 10 s), writes
the keys' usage counts it holds (written at least every 10 s while it runs), closes the
database and exits 0.

  --port N             port to listen on, 0 for any free one (default 8080; env PETSTORE_PORT)
  --host ADDRESS       address to listen on (default 0.0.0.0; env PETSTORE_HOST)
  --db URL             file:PATH (default file:petstore.db), :memory:, libsql://HOST,
                       http(s)://HOST or postgres://USER@HOST/DATABASE (env PETSTORE_DB; token
                       in PETSTORE_DB_AUTH_TOKEN, a Postgres password in PGPASSWORD or the URL).
                       A primary and its standbys: postgres://USER@H1:P1,H2:P2/DATABASE?
                       target_session_attrs=read-write (the servers follow a promoted standby).
                       TLS: ?sslmode=verify-full&sslrootcert=CA_FILE (libpq's parameters)
                       PETSTORE_DB_BUSY_TIMEOUT_MS=N: how long a request waits for another
                       process's write lock, or a server's answer, before a 503 (default 5000 for
                       libSQL, 1000 for Postgres)
  --limiter URL        keep the rate limits in Redis instead of the database (env
                       PETSTORE_LIMITER; password in PETSTORE_LIMITER_PASSWORD or the URL):
                         redis://HOST[:PORT][/DB]                       one Redis (DB 0..15)
                         redis+cluster://HOST:PORT,HOST:PORT,...        a Redis Cluster (any
                                                                        of its nodes)
                         redis+sentinel://HOST:PORT,HOST:PORT,.../NAME[/DB]
                                                                        the master that these
                                                                        sentinels call NAME
                       rediss://, rediss+cluster://, rediss+sentinel:// for TLS (a private CA:
                       env NODE_EXTRA_CA_CERTS=CA_FILE, trusted for PostgreSQL too). A request waits
                       for Redis at most PETSTORE_LIMITER_TIMEOUT_MS (default 1000), then gets a 503
  --change-limiter     the database records where its servers keep the rate limits (in the
                       database, or in Redis with --limiter), and a server started the other
                       way refuses to start, since the two would split every key's limits:
                       this flag records this server's way instead (restart the others after)
  --limiter-fail-open  while Redis fails, admit requests without limits instead of 503s, and
                       log it (env PETSTORE_LIMITER_FAIL_OPEN=1)
  --trust-proxy CIDRS  comma-separated proxy ranges whose X-Forwarded-For names the client
                       (default: none, the socket address is the client)
  --metrics-listen HOST:PORT
                       serve Prometheus metrics at GET /metrics on this address, its own
                       listener apart from the API (default: off), e.g. 127.0.0.1:9464
  --admin-listen [HOST:]PORT
                       serve the admin API (/admin/v1: keys' life, bans, the audit trail) and
                       the operator's page (/) on this address, never on the API's port
                       (default: off; a port alone is on 127.0.0.1). Admin tokens: 'petstore
                       admin-tokens create'. It answers requests for its own address (and,
                       on loopback, localhost), and refuses (403) what another site's page
                       sends, before any credential is looked at
  --admin-listen-public
                       let --admin-listen take an address other machines reach (0.0.0.0, a
                       LAN address): refused without it
  --admin-host NAMES   comma-separated host names the admin listener answers too (a name in
                       DNS or /etc/hosts for its address); any other Host is refused (403)
  --rolled-key-link URL
                       a page telling clients how to take a rolled key's new secret, sent as
                       Link: <URL>; rel="deprecation" with every answer to its old secret
                       (env PETSTORE_ROLLED_KEY_LINK)
  PETSTORE_BODY_TIMEOUT_MS=N
                       how long a request body may take to arrive once its headers are in:
                       past it the answer is 408 request_timeout and the connection is closed
                       (default 30000, at most 245000)
  --dev                development mode: listen on 127.0.0.1 unless --host says otherwise,
                       and when the database has no active key create a Free key and print it

Bootstrap key (off by default; environment only, so the key never shows in the process list):
  PETSTORE_BOOTSTRAP_KEY=psk_...       at start, store this key as an enterprise key unless the
                                       database already has it (then it keeps its limits), e.g.
                                       to give a --db :memory: server its first key. Any key
                                       'petstore keys create --json' printed will do (only its
                                       hash is stored: the database it was made in does not matter)
  PETSTORE_BOOTSTRAP_PER_MINUTE=N      its requests per minute (required with the key)
  PETSTORE_BOOTSTRAP_PER_DAY=N         its requests per day (required with the key)
  Under Deno, list these in --allow-env, else they are not seen.`,
  run: async (args, env, io) => {
    const config = serveConfig(args, env);
    const metrics = config.metricsListen ? serverMetrics({ build: BUILD_INFO }) : undefined;
    const warn = (event: string, fields: Record<string, unknown>) =>
      io.err(JSON.stringify({ time: new Date().toISOString(), level: "warn", event, ...fields }));
    // A database server that stops answering, and answers again: a line each, with the 503s answered meanwhile (Postgres).
    const storageOutages = outageLog(
      {
        lost: "storage unavailable",
        back: "storage available again",
        lengthField: "unavailableMs",
        countField: "answered503",
      },
      warn,
    );
    const storage = await openStorage(config.db, {
      ...metrics?.storage,
      // A storage failure no request meets: logged, counted, and reported by /healthz.
      onCheckpointFailed: (reason) => {
        warn("checkpoint failed", { reason });
        metrics?.storage.onCheckpointFailed(reason);
      },
      onAvailabilityChange: (problem) =>
        problem === undefined ? storageOutages.answered() : storageOutages.failed(problem),
    });
    // Redis failing the hits, by their own outcomes (never a health check's): each one a 503, or admitted without limits.
    const limiterOutages =
      config.limiter &&
      outageLog(
        config.limiter.failOpen
          ? {
              lost: "limiter failing open",
              back: "limiter no longer failing open",
              lengthField: "outageMs",
              countField: "admittedWithoutLimit",
              fields: { limiter: shownUrl(config.limiter.url) },
            }
          : {
              lost: "limiter unavailable",
              back: "limiter available again",
              lengthField: "unavailableMs",
              countField: "answered503",
              fields: { limiter: shownUrl(config.limiter.url) },
            },
        warn,
      );
    const redis =
      config.limiter &&
      (await openLimiter(config.limiter, warn, {
        onOutcome: (error) => {
          if (error === undefined) return limiterOutages!.answered();
          limiterOutages!.failed(error.message);
          limiterOutages!.counted();
        },
      }).catch((error: unknown) => {
        storage.close();
        throw error;
      }));
    try {
      // A server that cannot write would answer every create with a 503: refuse to start.
      await storage.check().catch((error: unknown) => {
        throw new Error(`cannot serve ${shownUrl(config.db.url)}: ${storageFailure(config.db, error)}`);
      });
      await agreeOnLimiter(storage, config, io);
      if (config.bootstrap !== undefined) await ensureBootstrapKey(storage.adapters.keys, config.bootstrap, io);
      const devKey = await checkKeys(storage, config, io);
      // The stores decide every shared instant by their clocks; how far this server's is from theirs, and their steps, are only said.
      // A database file's clock is this machine's, read here for free: it has no offset, but it steps as the store's.
      const database = storage.remote
        ? { store: "database", shown: shownUrl(config.db.url), now: storage.check }
        : { store: "database", shown: shownUrl(config.db.url), now: async () => Date.now(), local: true };
      const clocks = clockOffsets(
        [
          database,
          ...(redis ? [{ store: "limiter", shown: shownUrl(config.limiter!.url), now: redis.limiter.check }] : []),
        ],
        {
          log: (level, event, fields) =>
            io.err(JSON.stringify({ time: new Date().toISOString(), level, event, ...fields })),
          ...(metrics && { onOffset: metrics.clockOffset, onStep: metrics.clockStep }),
        },
      );
      const api = {
        ...storage.adapters,
        // Every decision of the database's limiter reads its clock: a step is seen at the next request.
        // (Redis's, failing open, would decide by this server's clock: its steps are seen by the checks.)
        limiter: redis ? redis.limiter : observedLimiter(storage.adapters.limiter, "database", clocks),
        trustProxy: config.trustProxy,
        bodyTimeoutMs: config.bodyTimeoutMs,
        ...(config.rolledKeyLink !== undefined && { rolledKeyLink: config.rolledKeyLink }),
      };
      // A limiter failing open keeps the API serving: /healthz stays 200 and says so.
      const limiterCheck = redis ? () => redis.limiter.check() : undefined;
      const check =
        limiterCheck && !config.limiter!.failOpen
          ? () => Promise.all([storage.check(), limiterCheck()])
          : storage.check;
      const status = health(check, undefined, config.limiter?.failOpen ? limiterCheck : undefined, clocks.notice);
      // Every 503 the API answers counts in the storage outage under way, if any.
      const watched = {
        ...status,
        storageFailed(what: string) {
          status.storageFailed(what);
          storageOutages.counted();
        },
      };
      const served = serverFetch({
        api,
        basePath: BASE_PATH,
        health: watched,
        log: io.out,
        ...(metrics ? { metrics } : {}),
      });
      const fetch = counted(served.fetch, metrics);
      const metricsServer = await startMetrics(config, metrics, io);
      // One process serves both: a change made through its admin listener applies to its API at once.
      const adminServer = await startAdmin(config, storage, { ...api, forgetKey: served.forgetKey }, io).catch(
        async (error: unknown) => {
          await metricsServer?.stop(0);
          throw error;
        },
      );
      const server = await serve({
        fetch,
        hostname: config.host,
        port: config.port,
        bodyTimeoutMs: config.bodyTimeoutMs,
      }).catch(async (error: unknown) => {
        await Promise.all([metricsServer?.stop(0), adminServer?.stop(0)]);
        throw new Error(listenFailure("", config.host, config.port, error, "--port (or PETSTORE_PORT)"));
      });
      const stop = stopRequested();
      const url = localUrl(server.hostname, server.port);
      const limiter = config.limiter && { limiter: shownUrl(config.limiter.url), failOpen: config.limiter.failOpen };
      logLine(io, "listening", {
        url,
        host: server.hostname,
        port: server.port,
        db: shownUrl(config.db.url),
        ...storage.notes,
        ...limiter,
        version: VERSION,
      });
      if (devKey !== undefined) printDevKey(io, devKey, url, BASE_PATH, pastableDb(config.db.url));
      void clocks.measure();
      const clockTimer = setInterval(() => void clocks.measure(), CLOCK_CHECK_EVERY_MS);
      const signal = await stop;
      clearInterval(clockTimer);
      logLine(io, "stopping", { signal, graceMs: GRACE_MS });
      // Said in the log so that an operator (and a test) sees requests were cut, without a clock.
      if (!(await server.stop(GRACE_MS))) logLine(io, "grace period over", { graceMs: GRACE_MS });
      await Promise.all([metricsServer?.stop(0), adminServer?.stop(GRACE_MS)]);
      // The keys' usage counts of the last seconds, before storage closes: a clean stop loses none.
      await served.flush().catch((error: unknown) => warn("usage counts not written", { reason: String(error) }));
      logLine(io, "stopped");
      return 0;
    } finally {
      redis?.close();
      storage.close();
    }
  },
};
