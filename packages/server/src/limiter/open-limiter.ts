import { type RedisLimiter, type RedisLimiterOptions, redisLimiter } from "@petstore/adapters/redis";
import { outcomeWithin } from "../http/_outcome-within.js";
import { shownUrl } from "../messages/shown-url.js";
import { reconnectWhenEnded } from "./reconnect-when-ended.js";
import { redisClient } from "./redis-client.js";
import { tlsFailure } from "../messages/tls-failure.js";

/** A rate limiter apart from the database: `--limiter redis://...`; read by `commands/_options.ts`. */
export interface LimiterConfig {
  /** `redis://[user:password@]host[:port][/db]`, `redis+cluster://...` or `redis+sentinel://...` (see `parseLimiterUrl`); `rediss...` for TLS. */
  url: string;
  /** The database index of the URL's path (0..15; none: 0), checked at start. */
  database: number;
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

/**
 * A key without expiry the server sets in Redis at start: when it is gone, so is everything
 * the limiter counted (a restart without persistence, FLUSHALL, a failover to an empty
 * replica), bans included, and that is worth a line in the log.
 */
// Under the buckets' prefix (an ACL that lets the server at `petstore:limit:*` lets it here), without their braces.
const MARKER_KEY = "petstore:limit:data-since";

/** How long the server waits for Redis at start before it refuses to start. */
const CONNECT_TIMEOUT_MS = 5_000;

/** Redis refusing a reconnect: the credentials it was given (a changed password, a user disabled). */
const REFUSED_RECONNECT = /^(WRONGPASS|NOAUTH|NOPERM)\b/;
/** Redis refusing the limiter's writes until an operator acts: out of memory, a failed save, an ACL. */
const REFUSING_WRITES = /^(OOM|MISCONF|NOPERM)\b/;

/**
 * Why Redis did not answer at start. Over TLS, a server that does not speak it on that port
 * never answers the handshake (a plain Redis waits for a command): said so.
 */
function noAnswer(url: string): string {
  const within = `no answer within ${CONNECT_TIMEOUT_MS / 1000} s`;
  return /^rediss/.test(url) ? `TLS: ${within} to the TLS handshake (does that port speak TLS?)` : within;
}

/**
 * Connects to Redis with ioredis (pure JavaScript over `node:net`/`node:tls`: it runs in the
 * compiled Bun binary and under Deno alike, there with an unrestricted `--allow-env`) and waits until it answers, so that a wrong URL
 * or a Redis that is down stops the server at start with one line. While serving, a lost
 * connection is retried every second at most, forever; meanwhile hits fail at once (no offline
 * queue) and requests get 503s, or are admitted with `failOpen`. `warn` gets one line when the
 * connection is lost and one when it is back; `onOutcome` hears of every hit (see
 * `RedisLimiterOptions.onOutcome`), for the lines of the requests' own outages.
 */
export async function openLimiter(
  config: LimiterConfig,
  warn: (event: string, fields: Record<string, unknown>) => void,
  {
    watchDataLoss = true,
    onOutcome,
  }: {
    /**
     * False for a command that only reads or lifts a ban: it leaves the marker alone, since
     * setting it after a loss would hide the loss from the servers.
     */
    watchDataLoss?: boolean;
    onOutcome?: RedisLimiterOptions["onOutcome"];
  } = {},
): Promise<OpenLimiter> {
  const shown = shownUrl(config.url);
  // One Redis, a Cluster or the master Sentinel names, as the URL says (see redis-client.ts).
  const redis = await redisClient(config.url, {
    ...(config.password !== undefined && { password: config.password }),
    database: config.database,
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
  });
  let connected = false;
  /** Connected once: from then on a lost connection and its return are logged. */
  let started = false;
  // ioredis reports a dropped connection as "close" (and a refused reconnect as "error").
  const lost = (reason: string) => {
    if (!connected) return;
    connected = false;
    warn("limiter connection lost", { limiter: shown, reason });
  };
  /**
   * What Redis last said went wrong since the connection was last ready: a failed `connect()`
   * only says "Connection is closed", and a command while reconnecting "Stream isn't
   * writeable", where Redis said why (WRONGPASS after a password change, a refused TLS).
   */
  let lastError: string | undefined;
  /** The refusals said since the connection was last ready: each once per outage. */
  const refusalsSaid = new Set<string>();
  redis.on("error", (error: Error) => {
    const tls = tlsFailure(error);
    const reason = tls ?? error.message;
    lastError = reason;
    // Redis (or its TLS) refusing the reconnect is said, once per reason: "the connection
    // closed" named none. A refused or timed-out socket is the outage itself, already said.
    if (started && !connected && (tls !== undefined || REFUSED_RECONNECT.test(reason)) && !refusalsSaid.has(reason)) {
      refusalsSaid.add(reason);
      warn("limiter reconnect refused", { limiter: shown, reason });
    }
    lost(error.message);
  });
  redis.on("close", () => lost("the connection closed"));
  /**
   * Sets the marker unless Redis has it; when Redis had lost it, says so: counts and bans
   * started again from zero. At start there is nothing to compare with.
   */
  const markerKept = async (atStart: boolean) => {
    const set = await redis.set(MARKER_KEY, new Date().toISOString(), "NX");
    if (set === "OK" && !atStart) {
      warn("limiter data lost", {
        limiter: shown,
        reason:
          "Redis no longer holds what the limiter stored (a restart without persistence, FLUSHALL or a failover): counts and bans start again from zero",
      });
    }
  };
  redis.on("ready", () => {
    if (connected) return;
    connected = true;
    lastError = undefined;
    refusalsSaid.clear();
    if (!started) return;
    warn("limiter reconnected", { limiter: shown });
    if (watchDataLoss) markerKept(false).catch(() => {});
  });
  // A Cluster loses and finds its nodes one by one (a master dead, its replica promoted): each said once.
  const node = ({ options }: { options: { host?: string; port?: number } }) => `${options.host}:${options.port}`;
  redis.on("-node", (lostNode: { options: { host?: string; port?: number } }) =>
    warn("limiter node lost", { limiter: shown, node: node(lostNode) }),
  );
  redis.on(
    "+node",
    (added: { options: { host?: string; port?: number } }) =>
      started && warn("limiter node added", { limiter: shown, node: node(added) }),
  );
  try {
    const connecting = redis.connect();
    if ((await outcomeWithin(connecting, CONNECT_TIMEOUT_MS)) === "timeout") throw new Error(noAnswer(config.url));
    await connecting;
    await redis.ping();
    // ioredis selects the URL's database on connecting but stays in database 0 when the server
    // refuses it (fewer databases, Redis Cluster): selected again here, a refusal stops the start.
    if (config.database !== 0) await redis.select(config.database);
    if (watchDataLoss) await markerKept(true).catch(() => {});
  } catch (error) {
    redis.disconnect();
    throw new Error(
      `cannot use limiter ${shown}: ${lastError ?? (error instanceof Error ? error.message : String(error))}`,
    );
  }
  started = true;
  // Lost during the checks above, the connection says when it is back (and what was lost).
  connected = redis.status === "ready";
  let closed = false;
  reconnectWhenEnded(
    redis,
    () => closed,
    () => warn("limiter connecting again", { limiter: shown, reason: "the Redis client ended by itself" }),
  );
  /** Why Redis, connected, refuses the limiter's commands (OOM, MISCONF, NOPERM...): said once, until one is answered. */
  let refusing: string | undefined;
  const refused = (error: unknown): never => {
    if (!connected) throw new Error(lastError ?? "the connection to Redis is lost; reconnecting", { cause: error });
    const reason = error instanceof Error ? error.message : String(error);
    // Only Redis refusing writes for as long as it is so; the rest (a node of a Cluster lost, a
    // demoted master's READONLY, NOSCRIPT after a restart) passes with the outage or the retry.
    if (!REFUSING_WRITES.test(reason)) throw error;
    if (refusing === undefined) warn("limiter refusing commands", { limiter: shown, reason });
    refusing = reason;
    throw error;
  };
  const answered = (command: string) => {
    // TIME (the health check's, the clock's) is answered under OOM too: only a script, which writes, says Redis takes writes again.
    if (refusing !== undefined && command.startsWith("EVAL")) {
      refusing = undefined;
      warn("limiter answering again", { limiter: shown });
    }
  };
  const limiter = redisLimiter({
    send: (args) =>
      redis.call(args[0]!, ...args.slice(1)).then((reply) => {
        answered(args[0]!);
        return reply;
      }, refused),
    timeoutMs: config.timeoutMs,
    failOpen: config.failOpen,
    ...(onOutcome && { onOutcome }),
  });
  // Health checks look for the marker too: a FLUSHALL loses the data without a reconnect.
  const ping = limiter.check;
  return {
    limiter: {
      ...limiter,
      check: () =>
        ping().then(async (now) => {
          await markerKept(false);
          return now;
        }),
    },
    close: () => {
      closed = true;
      redis.disconnect();
    },
  };
}
