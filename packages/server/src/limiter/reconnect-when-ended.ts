import type { RedisConnection } from "./redis-client.js";

/** How long after ending by itself a client is connected again: never a loop that spins. */
const AFTER_MS = 1_000;

/**
 * Connects `client` again when ioredis ended it by itself, unless `closed()`. ioredis can:
 * behind Sentinel, the failover detector of the connection just lost still listens, and when the
 * sentinels announce the new master while the client is asking them for it, it cuts that connect
 * short and the client ends for good ("Connection is closed.", status `end`; ioredis 5.11 and
 * 6.0, seen under load in test/topologies/redis-sentinel.test.ts for one killed master in three
 * to ten). `onRestart` hears of each restart.
 */
export function reconnectWhenEnded(
  client: Pick<RedisConnection, "status" | "on" | "connect">,
  closed: () => boolean,
  onRestart: () => void,
): void {
  client.on("end", () => {
    const timer = setTimeout(() => {
      if (closed() || client.status !== "end") return;
      onRestart();
      client.connect().catch(() => {});
    }, AFTER_MS);
    // Never what keeps a process alive (Bun, Deno and Node have unref).
    (timer as { unref?: () => void }).unref?.();
  });
}
