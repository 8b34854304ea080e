import { d1Adapters } from "@petstore/adapters/d1";
import { libsqlAdapters } from "@petstore/adapters/libsql";
import { memoryAdapters } from "@petstore/adapters/memory";
import { migratePostgres, postgresAdapters } from "@petstore/adapters/postgres";
import { redisLimiter } from "@petstore/adapters/redis";
import { Redis } from "ioredis";
import postgres from "postgres";
import { afterAll, afterEach, beforeEach, inject } from "vitest";
import { tempDatabase } from "../_support/libsql-database.js";
import { emptyDataTables, type PgBouncer, startPgBouncer } from "../_support/pgbouncer.js";
import { postgresClient, usePostgresDatabase } from "../_support/postgres-database.js";
import { type RedisServer, startRedis } from "../_support/redis-server.js";
import { useWorkerdBindings } from "../_support/workerd.js";
import {
  type Adapters,
  createPetstore,
  type IssueApiKeyInput,
  issueApiKey,
  type PetstoreOptions,
} from "@petstore/core";

/**
 * The HTTP conformance suite runs once per adapter kit: the same assertions, whatever
 * storage sits behind `createPetstore`.
 */

type AdapterSet = Adapters;

export interface AdapterKit {
  name: string;
  /** A fresh adapter set deciding windows, bans and expiries by `clock` (the test's) instead of its store's. */
  open(clock: () => number): Promise<{ adapters: AdapterSet; close(): Promise<void> }>;
}

export const ADAPTER_KITS: AdapterKit[] = [
  { name: "memory", open: async (clock) => ({ adapters: memoryAdapters({ clock }), close: async () => {} }) },
  libsqlKit("libsql file", () => tempDatabase()),
  // As a remote URL gets it: a plain client, no local fast path; the same SQL a server receives.
  libsqlKit("libsql plain client", () => tempDatabase({ plain: true })),
  postgresKit(),
  pgbouncerKit(),
  libsqlRedisKit(),
  workerdKit(),
];

/**
 * What the worker-module example runs on at the edge: a D1 database with the limits in
 * `PetstoreRateLimiter` Durable Objects, both in workerd (miniflare): the D1 adapters' statements
 * run there on the real database (sent by `databaseByWorker`), the hits reach the objects through
 * the namespace's binding proxy; a fresh database and fresh buckets per world.
 */
function workerdKit(): AdapterKit {
  const workerd = useWorkerdBindings();
  return {
    name: "d1 + durable-object limiter in workerd",
    open: async (clock) => {
      const adapters = {
        ...d1Adapters(await workerd.databaseByWorker(), { clock }),
        limiter: await workerd.limiter(clock),
      };
      return { adapters, close: async () => {} };
    },
  };
}

/**
 * A store in a libSQL file with the limits in Redis (a supported combination): a real
 * redis-server for the suite file, started on first use and stopped after it, a fresh key
 * prefix (so fresh buckets) per world.
 */
function libsqlRedisKit(): AdapterKit {
  let server: Promise<RedisServer> | undefined;
  let client: Redis | undefined;
  let worlds = 0;
  afterAll(async () => {
    client?.disconnect();
    await (await server)?.stop();
  });
  return {
    name: "libsql file + redis limiter",
    open: async (clock) => {
      server ??= startRedis();
      const redis = (client ??= new Redis((await server).url));
      const database = await tempDatabase();
      const limiter = redisLimiter({
        send: (args) => redis.call(args[0]!, ...args.slice(1)),
        prefix: `conformance:${++worlds}:`,
        clock,
      });
      return { adapters: { ...libsqlAdapters(database.db, { clock }), limiter }, close: database.close };
    },
  };
}

/** The Postgres adapters on a fresh migrated schema of the suite's database on the run's real server. */
function postgresKit(): AdapterKit {
  const database = usePostgresDatabase();
  return {
    name: "postgres",
    open: async (clock) => {
      const { source, close } = await database.fresh();
      return { adapters: postgresAdapters(source, { clock }), close };
    },
  };
}

/**
 * The Postgres adapters through PgBouncer in transaction pooling (each transaction on whichever
 * server connection is free), with postgres.js as docs/scaling-out.md says to run it there:
 * no prepared statements. One PgBouncer and one database for the suite file, in front of the
 * run's server, made and migrated through PgBouncer on first use; each world empties its tables
 * first (PgBouncer passes no `search_path`, so a schema per world cannot be chosen; a database
 * per world costs a checkpoint each to drop).
 */
function pgbouncerKit(): AdapterKit {
  const serverUrl = inject("postgresUrl");
  const name = `bounced_${process.pid}_${Date.now().toString(36)}`;
  const admin = postgresClient(serverUrl, { max: 1 });
  const direct = postgresClient(serverUrl.replace(/\/[^/]*$/, `/${name}`), { max: 1 });
  let ready: Promise<PgBouncer> | undefined;
  afterAll(async () => {
    if (ready === undefined) return;
    await Promise.all([(await ready).stop(), direct.end({ timeout: 5 })]);
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end({ timeout: 5 });
  });
  const setUp = async () => {
    const bouncer = await startPgBouncer(Number(new URL(serverUrl).port), "transaction");
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const sql = postgres(bouncer.url(name), { max: 1, prepare: false, onnotice: () => {} });
    await migratePostgres({ sql });
    await sql.end({ timeout: 5 });
    return bouncer;
  };
  return {
    name: "postgres through pgbouncer (transaction pooling)",
    open: async (clock) => {
      const bouncer = await (ready ??= setUp());
      await emptyDataTables(direct);
      const sql = postgres(bouncer.url(name), { max: 4, prepare: false, onnotice: () => {} });
      return { adapters: postgresAdapters({ sql }, { clock }), close: () => sql.end({ timeout: 5 }) };
    },
  };
}

/** The libSQL adapters on a migrated database file in its own temporary directory. */
function libsqlKit(name: string, open: typeof tempDatabase): AdapterKit {
  return {
    name,
    open: async (clock) => {
      const database = await open();
      return { adapters: libsqlAdapters(database.db, { clock }), close: database.close };
    },
  };
}

/** 2026-11-21 12:00:10 UTC: 50 s before the minute window resets. */
export const T0 = Date.UTC(2026, 10, 21, 12, 0, 10);
export const BASE = "http://petstore.test";
const ADDRESS = "203.0.113.7";

export interface CallOptions {
  key?: string | undefined;
  body?: unknown;
  /** Raw body text; wins over `body`. */
  raw?: string;
  headers?: Record<string, string>;
  address?: string;
}

export type World = Awaited<ReturnType<typeof openWorld>>;

/**
 * A petstore on a fresh adapter set with a clock the test moves: the adapters' (their stores'
 * stand-in) and the server's. The server's monotonic clock moves with it, but for the steps
 * `step` makes (NTP correcting the clocks), which move the wall clocks only.
 */
export async function openWorld(kit: AdapterKit, options: Partial<PetstoreOptions> = {}) {
  const clock = { now: T0 };
  let stepped = 0;
  const step = (ms: number) => {
    clock.now += ms;
    stepped += ms;
  };
  const { adapters, close: closeAdapters } = await kit.open(() => clock.now);
  /** Unexpected errors (500s); a test that provokes one on purpose empties this. */
  const internalErrors: unknown[] = [];
  const petstore = createPetstore({
    ...adapters,
    clock: () => clock.now,
    monotonicClock: () => clock.now - stepped,
    onError: (error) => internalErrors.push(error),
    ...options,
  });

  async function close() {
    await closeAdapters();
    if (internalErrors.length > 0)
      throw new Error(`unexpected internal errors: ${internalErrors.map(String).join("; ")}`);
  }

  async function key(input: IssueApiKeyInput = { plan: "free" }): Promise<string> {
    return (await issueApiKey(adapters.keys, input, { now: clock.now })).key;
  }

  function call(method: string, path: string, options: CallOptions = {}): Promise<Response> {
    const headers = new Headers(options.headers);
    if (options.key !== undefined) headers.set("Authorization", `Bearer ${options.key}`);
    let body: string | undefined = options.raw;
    if (body === undefined && options.body !== undefined) {
      body = JSON.stringify(options.body);
      if (!headers.has("Content-Type")) headers.set("Content-Type", "application/json");
    }
    const request = new Request(BASE + path, { method, headers, ...(body === undefined ? {} : { body }) });
    return petstore.fetch(request, { clientAddress: options.address ?? ADDRESS });
  }

  /** A pet created through the API (counts against the key's limits like any request). */
  async function createPet(apiKey: string, body: unknown = { name: "Rex", categoryId: 1 }) {
    const response = await call("POST", "/v1/pets", { key: apiKey, body });
    if (response.status !== 201) throw new Error(`create failed: ${response.status} ${await response.text()}`);
    return (await response.json()) as { id: number; name: string; categoryId: number; status?: string };
  }

  return { adapters, clock, step, petstore, key, call, createPet, internalErrors, close };
}

/** Limits no test of an operation reaches, so that only the rate-limit suite meets a 429. */
export const ROOMY_LIMITS: Partial<PetstoreOptions> = { plans: { free: { perMinute: 1000, perDay: 10000 } } };

/**
 * A fresh world for each test of a suite, with a Free key made in it, closed after the test.
 * `use` receives both before every test.
 * @example beforeEachWorld(kit, ROOMY_LIMITS, (opened, freeKey) => ([world, key] = [opened, freeKey]));
 */
export function beforeEachWorld(
  kit: AdapterKit,
  options: Partial<PetstoreOptions>,
  use: (world: World, key: string) => void,
): void {
  let world: World | undefined;
  beforeEach(async () => {
    world = await openWorld(kit, options);
    use(world, await world.key());
  });
  afterEach(() => world?.close());
}

/** Asserts the Error body of the contract and returns it. */
export async function errorBody(response: Response, status: number, code: string) {
  const body = (await response.json()) as {
    code: string;
    message: string;
    status: number;
    details?: { path: string; message: string }[];
  };
  if (
    response.status !== status ||
    body.code !== code ||
    body.status !== status ||
    typeof body.message !== "string" ||
    body.message === ""
  ) {
    throw new Error(`expected ${status} ${code}, got ${response.status} ${JSON.stringify(body)}`);
  }
  return body;
}
