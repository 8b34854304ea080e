/**
 * The rate limiter on Redis (or anything that speaks its protocol and runs Lua scripts): pair
 * it with any store, e.g. libSQL or Postgres.
 * @example
 * import Redis from "ioredis";
 * const redis = new Redis(process.env.REDIS_URL!);
 * const limiter = redisLimiter({ send: (args) => redis.call(args[0]!, ...args.slice(1)) });
 */
export { redisLimiter } from "./limiter.js";
export type { RedisLimiter, RedisLimiterOptions, RedisSend } from "./limiter.js";
