import { rateLimiterContract } from "@petstore/core/testing";
import { Redis } from "ioredis";
import { createClient } from "redis";
import { afterAll, beforeAll } from "vitest";
import { type RedisServer, startRedis } from "../../../../test/_support/redis-server.js";
import { type RedisSend, redisLimiter } from "./index.js";

/**
 * The rate-limiter contract on a real `redis-server`, through two clients: ioredis and
 * node-redis, each as the README's one-liner. Every fixture gets a prefix of its own, so the
 * tests share the server without sharing buckets.
 */
let server: RedisServer;
const clients: Record<string, { send: RedisSend; close: () => Promise<unknown> }> = {};
let fixtures = 0;

beforeAll(async () => {
  server = await startRedis();
  const ioredis = new Redis(server.url);
  clients.ioredis = { send: (args) => ioredis.call(args[0]!, ...args.slice(1)), close: () => ioredis.quit() };
  const nodeRedis = await createClient({ url: server.url }).connect();
  clients["node-redis"] = { send: (args) => nodeRedis.sendCommand(args), close: () => nodeRedis.quit() };
}, 30_000);

afterAll(async () => {
  await Promise.all(Object.values(clients).map((client) => client.close().catch(() => {})));
  await server?.stop();
});

for (const name of ["ioredis", "node-redis"]) {
  rateLimiterContract(`redis via ${name}`, async (clock) => ({
    limiter: redisLimiter({ send: clients[name]!.send, prefix: `contract:${++fixtures}:`, clock }),
  }));
}
