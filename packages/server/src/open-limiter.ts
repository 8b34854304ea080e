import { type RedisLimiter, redisLimiter } from "@petstore/adapters/redis";
import { redisClient } from "./redis-client.js";
import { tlsFailure } from "./tls-failure.js";

/** A rate limiter apart from the database: `--limiter redis://...`; read by `commands/_options.ts`. */
export interface LimiterConfig {
  /** `redis://[user:password@]host[:port][/db]`, `redis+cluster://...` or `redis+sentinel://...` (see `parseLimiterUrl`); `rediss...` for TLS. */
  url: string;
  /** From `PETSTORE_LIMITER_PASSWORD`, so it need not be in the URL (or on argv). */
  password?: string;
  /** The longest a request waits for Redis (`PETSTORE_LIMITER_TIMEOUT_MS`). */
  timeoutMs: number;
  /** Admit requests while Redis fails (`--limiter-fail-open`), logging it. */
  failOpen: boolean;
}

/** The limiter on Redis, its health check, and the way to close its connection. */
export interface OpenLimiter {
  limiter: RedisLimiter;
  close(): void;
}

/** How long the server waits for Redis at start before it refuses to start. */
const CONNECT_TIMEOUT_MS = 5_000;
/** While failing open, at most one warning per this many milliseconds. */
const FAIL_OPEN_LOG_EVERY_MS = 10_000;

/**
 * Why Redis did not answer at start. Over TLS, a server that does not speak it on that port
 * never answers the handshake (a plain Redis waits for a command): said so.
 */
function noAnswer(url: string): string {
  const within = `no answer within ${CONNECT_TIMEOUT_MS / 1000} s`;
  return /^rediss/.test(url) ? `TLS: ${within} to the TLS handshake (does that port speak TLS?)` : within;
}

/** The URL as it may be shown: without credentials. */
export function displayLimiter(url: string): string {
  return url.replace(/\?.*$/, "").replace(/\/\/[^/@]*@/, "//");
}

/**
 * Connects to Redis with ioredis (pure JavaScript over `node:net`/`node:tls`: it runs in the
 * compiled Bun binary and under Deno alike, there with an unrestricted `--allow-env`) and waits until it answers, so that a wrong URL
 * or a Redis that is down stops the server at start with one line. While serving, a lost
 * connection is retried every second at most, forever; meanwhile hits fail at once (no offline
 * queue) and requests get 503s, or are admitted with `failOpen`. `warn` gets one line when the
 * connection is lost and one when it is back, and while failing open one line per 10 s.
 */
export async function openLimiter(config: LimiterConfig, warn: (event: string, fields: Record<string, unknown>) => void): Promise<OpenLimiter> {
  const shown = displayLimiter(config.url);
  // One Redis, a Cluster or the master Sentinel names, as the URL says (see redis-client.ts).
  const redis = await redisClient(config.url, { ...(config.password !== undefined && { password: config.password }), connectTimeoutMs: CONNECT_TIMEOUT_MS });
  let connected = false;
  /** Connected once: from then on a lost connection and its return are logged. */
  let started = false;
  // ioredis reports a dropped connection as "close" (and a refused reconnect as "error").
  const lost = (reason: string) => {
    if (!connected) return;
    connected = false;
    warn("limiter connection lost", { limiter: shown, reason });
  };
  /** What Redis last said went wrong: a failed `connect()` only says "Connection is closed". */
  let lastError: string | undefined;
  redis.on("error", (error: Error) => {
    lastError = tlsFailure(error) ?? error.message;
    lost(error.message);
  });
  redis.on("close", () => lost("the connection closed"));
  redis.on("ready", () => {
    if (connected) return;
    connected = true;
    if (started) warn("limiter reconnected", { limiter: shown });
  });
  // A Cluster loses and finds its nodes one by one (a master dead, its replica promoted): each said once.
  const node = ({ options }: { options: { host?: string; port?: number } }) => `${options.host}:${options.port}`;
  redis.on("-node", (lostNode: { options: { host?: string; port?: number } }) => warn("limiter node lost", { limiter: shown, node: node(lostNode) }));
  redis.on("+node", (added: { options: { host?: string; port?: number } }) => started && warn("limiter node added", { limiter: shown, node: node(added) }));
  try {
    await Promise.race([
      redis.connect(),
      new Promise((_, reject) => setTimeout(reject, CONNECT_TIMEOUT_MS, new Error(noAnswer(config.url))).unref?.()),
    ]);
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    throw new Error(`cannot use limiter ${shown}: ${lastError ?? (error instanceof Error ? error.message : String(error))}`);
  }
  connected = started = true;
  let lastWarned = Number.NEGATIVE_INFINITY;
  let admittedSince = 0;
  const limiter = redisLimiter({
    send: (args) => redis.call(args[0]!, ...args.slice(1)),
    timeoutMs: config.timeoutMs,
    failOpen: config.failOpen,
    onFailOpen: (error) => {
      admittedSince += 1;
      const now = Date.now();
      if (now - lastWarned < FAIL_OPEN_LOG_EVERY_MS) return;
      warn("limiter failing open", { limiter: shown, reason: error.message, admittedWithoutLimit: admittedSince });
      lastWarned = now;
      admittedSince = 0;
    },
  });
  return { limiter, close: () => redis.disconnect() };
}
