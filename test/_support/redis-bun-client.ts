// Run by Bun (see packages/adapters/src/redis/bun-redis.test.ts): the Redis limiter on Bun's
// built-in RedisClient, through the README's one-liner. Prints one JSON line of decisions.
import { redisLimiter } from "@petstore/adapters/redis";
import type { WindowPair } from "@petstore/core";
import { RedisClient } from "bun";

const url = process.argv[2];
if (!url) throw new Error("usage: bun redis-bun-client.ts REDIS_URL");
const client = new RedisClient(url);
const T0 = Date.UTC(2030, 0, 15, 12, 0, 10);
const limiter = redisLimiter({ send: (args) => client.send(args[0]!, args.slice(1)), prefix: "bun:", clock: () => T0 });
const windows: WindowPair = [
  { name: "minute", limit: 5, seconds: 60 },
  { name: "day", limit: 100, seconds: 86_400 },
];
const ban = { threshold: 2, seconds: 600 };
const hit = () => limiter.hit({ bucket: "key:bun", windows, ban });
const concurrent = await Promise.all(Array.from({ length: 8 }, hit));
await client.send("SCRIPT", ["FLUSH"]);
// The server forgot the script: this hit goes through NOSCRIPT and EVAL.
const afterFlush = await hit();
console.log(
  JSON.stringify({
    allowed: concurrent.map((d) => d.allowed),
    remaining: concurrent.map((d) => d.windows[0]!.remaining),
    bannedUntil: concurrent.map((d) => d.bannedUntil ?? null),
    afterFlush: { allowed: afterFlush.allowed, bannedUntil: afterFlush.bannedUntil ?? null },
  }),
);
client.close();
