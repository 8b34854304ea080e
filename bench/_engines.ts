/**
 * The database and Redis servers the PostgreSQL and Redis variants share within one run of
 * `npm run bench`: started on first use, on loopback, unpinned (they take whichever core is
 * free, for the binary and its peer alike), stopped by PID at the end (`stopEngines`).
 * Each variant's start gets a fresh database; Redis is shared (every key is new to it).
 */
import { type PostgresServer, startPostgres } from "../test/_support/postgres-server.js";
import { type RedisServer, startRedis } from "../test/_support/redis-server.js";

let postgres: Promise<PostgresServer> | undefined;
let redis: Promise<RedisServer> | undefined;
let databases = 0;

/** A new empty database on the run's PostgreSQL server: its URL. */
export async function freshDatabase(): Promise<string> {
  postgres ??= startPostgres();
  return (await postgres).createDatabase(`bench_${process.pid}_${++databases}`);
}

/** The run's Redis: `redis://127.0.0.1:PORT`. */
export async function sharedRedis(): Promise<string> {
  redis ??= startRedis();
  return (await redis).url;
}

/** Stops what was started; for the end of the run. */
export async function stopEngines(): Promise<void> {
  await Promise.all([postgres?.then((server) => server.destroy()), redis?.then((server) => server.stop())]);
}
