import { rateLimiterContract } from "@petstore/core/testing";
import { Cluster } from "ioredis";
import { createCluster } from "redis";
import { afterAll, beforeAll } from "vitest";
import { type RedisCluster, startRedisCluster } from "../../../../test/_support/redis-cluster.js";
import { type RedisSend, redisLimiter } from "./index.js";

/**
 * The rate-limiter contract on a real Redis Cluster (three masters, three replicas), through
 * the cluster clients a team would hand in: ioredis's `Cluster` and node-redis's
 * `createCluster`, each as the README's one-liner. A bucket is one key (`{bucket}` is its hash
 * tag), so each hit's script runs on the one master that owns it: no CROSSSLOT, and a MOVED
 * is followed by the client.
 */
let cluster: RedisCluster;
const clients: Record<string, { send: RedisSend; close: () => Promise<unknown> }> = {};
let fixtures = 0;

beforeAll(async () => {
  cluster = await startRedisCluster();
  const seeds = cluster.ports.map((port) => ({ host: "127.0.0.1", port }));
  const ioredis = new Cluster(seeds);
  clients.ioredis = { send: (args) => ioredis.call(args[0]!, ...args.slice(1)), close: () => ioredis.quit() };
  const nodeRedis = await createCluster({
    rootNodes: seeds.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
  }).connect();
  // node-redis routes by the key it is given: a script's first key (after the SHA and the key count).
  clients["node-redis"] = {
    send: (args) => nodeRedis.sendCommand(/^EVAL/.test(args[0]!) ? args[3] : undefined, false, args),
    close: () => nodeRedis.quit(),
  };
}, 60_000);

afterAll(async () => {
  await Promise.all(Object.values(clients).map((client) => client.close().catch(() => {})));
  await cluster?.stop();
});

for (const name of ["ioredis", "node-redis"]) {
  rateLimiterContract(`redis cluster via ${name}`, async (clock) => ({
    limiter: redisLimiter({ send: clients[name]!.send, prefix: `cluster:${++fixtures}:`, clock }),
  }));
}
