import type { RedisOptions } from "ioredis";
import { type LimiterTarget, parseLimiterUrl } from "./limiter-url.js";

/** What the limiter needs of a connection (ioredis's `Redis` or `Cluster`): a command, a probe, its events, and a way out. */
export interface RedisConnection {
  connect(): Promise<void>;
  ping(): Promise<string>;
  call(command: string, ...args: string[]): Promise<unknown>;
  set(key: string, value: string, mode: "NX"): Promise<unknown>;
  select(database: number): Promise<unknown>;
  disconnect(): void;
  /** `ready` while connected (ioredis's Redis and Cluster alike). */
  readonly status: string;
  /** `ready`, `error`, `close`; a Cluster also `-node` and `+node` (listeners typed as ioredis types them). */
  // biome-ignore lint/suspicious/noExplicitAny: each event's listener takes its own arguments
  on(event: string, listener: (...args: any[]) => void): unknown;
}

/**
 * An ioredis client for `url` (see `parseLimiterUrl`), not yet connected (`connect()`), that
 * never queues a command while it is not connected and never retries one: a hit then fails at
 * once and the limiter answers for it (a 503, or an admission with fail-open). A lost node is
 * reconnected every second at most, forever.
 * - one Redis: `new Redis(url)`;
 * - a Cluster: `new Cluster(nodes)`, which reads the slot map from any node, follows `MOVED`
 *   and `ASK`, and reads it again when a node is lost, so that a promoted replica is found;
 * - Sentinel: `new Redis({ sentinels, name })`, which asks the sentinels for the master at
 *   every connection and listens for their `+switch-master`; a master demoted under it
 *   answers `READONLY`, on which it reconnects and asks again.
 * `password` (from the environment) wins over the URL's; `database` is the URL's, as
 * `commands/_options.ts` read it (a Cluster has only 0).
 */
export async function redisClient(
  url: string,
  settings: { password?: string; database: number; connectTimeoutMs: number },
): Promise<RedisConnection> {
  const target: LimiterTarget = parseLimiterUrl(url);
  // Loaded only for --limiter: its `debug` dependency lists the whole environment when loaded,
  // which Deno refuses unless --allow-env is unrestricted.
  const ioredis = await import("ioredis");
  const common = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    lazyConnect: true,
    connectTimeout: settings.connectTimeoutMs,
    retryStrategy: (times: number) => Math.min(times * 100, 1_000),
  } satisfies RedisOptions;
  if (target.kind === "single")
    return new ioredis.Redis(target.url, {
      ...common,
      db: settings.database,
      ...(settings.password !== undefined && { password: settings.password }),
    });
  const credentials = {
    ...(target.username !== undefined && { username: target.username }),
    ...((settings.password ?? target.password) !== undefined && { password: settings.password ?? target.password }),
  };
  if (target.kind === "cluster") {
    return new ioredis.Cluster(target.nodes, {
      enableOfflineQueue: false,
      lazyConnect: true,
      clusterRetryStrategy: (times) => Math.min(times * 100, 1_000),
      // A command meeting a failover is tried again a few times, 100 ms apart, within the limiter's timeout.
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      redisOptions: { ...common, ...credentials, ...(target.tls && { tls: {} }) },
    });
  }
  return new ioredis.Redis({
    ...common,
    ...credentials,
    sentinels: target.sentinels,
    name: target.name,
    db: target.db,
    failoverDetector: true,
    // The old master, demoted to a replica, refuses writes: find the new one.
    reconnectOnError: (error) => /^READONLY/.test(error.message),
    ...(target.tls && { tls: {}, enableTLSForSentinelMode: true }),
  });
}
