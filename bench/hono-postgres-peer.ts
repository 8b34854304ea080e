/**
 * The peer of the binary on PostgreSQL (issue 18, section 5): the same API built by hand the
 * way a team would on the engines it already runs, on Hono under Bun. Pets in PostgreSQL
 * through postgres.js (a pool of 10, as the binary's); limits through rate-limiter-flexible,
 * a minute and a day limiter joined by its `RateLimiterUnion`, kept in Redis
 * (`RateLimiterRedis` over ioredis) when BENCH_REDIS_URL is set, else in PostgreSQL
 * (`RateLimiterPostgres`, over postgres.js through the small `query` shim that library
 * expects); the product's full header set on every answer. What it leaves out, as a team
 * might: the ban after repeated refusals, idempotency keys, key revocation (the key is a Map
 * from BENCH_KEY, as in the other peers; the binary caches its key lookups for seconds too).
 * Run by bench/run.ts: `bun bench/hono-postgres-peer.ts` with BENCH_PORT, BENCH_KEY,
 * BENCH_PER_MINUTE, BENCH_PER_DAY, BENCH_DATABASE_URL and perhaps BENCH_REDIS_URL set.
 */
import { Hono } from "hono";
import { Redis } from "ioredis";
import postgres from "postgres";
import {
  type RateLimiterAbstract,
  RateLimiterPostgres,
  RateLimiterRedis,
  type RateLimiterRes,
  RateLimiterUnion,
} from "rate-limiter-flexible";
import * as v from "valibot";
import { issueDetails, JSON_TYPE, Limit, NewPet } from "./_peer.js";

const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;
const BEARER = /^bearer +(\S+) *$/i;
const perMinute = Number(process.env.BENCH_PER_MINUTE ?? 60);
const perDay = Number(process.env.BENCH_PER_DAY ?? 1000);
const policy = `"minute";q=${perMinute};w=60, "day";q=${perDay};w=86400`;
const keys = new Map<string, string>(process.env.BENCH_KEY ? [[process.env.BENCH_KEY, "key_bench"]] : []);

const sql = postgres(process.env.BENCH_DATABASE_URL!, { max: 10, onnotice: () => {} });
await sql`CREATE TABLE IF NOT EXISTS pets (id bigserial PRIMARY KEY, name text NOT NULL, category_id bigint NOT NULL, status text)`;

/** rate-limiter-flexible speaks node-postgres (`query({ text, values }) -> { rows }`); postgres.js is one line away. */
const pgShim = {
  query: ({ text, values }: { text: string; values?: unknown[] }) =>
    sql.unsafe(text, (values ?? []) as never[], { prepare: true }).then((rows) => ({ rows })),
};

async function limiters(): Promise<RateLimiterAbstract[]> {
  if (process.env.BENCH_REDIS_URL) {
    const redis = new Redis(process.env.BENCH_REDIS_URL, { enableOfflineQueue: false });
    await new Promise((resolve) => redis.once("ready", resolve));
    return [
      new RateLimiterRedis({ storeClient: redis, keyPrefix: "minute", points: perMinute, duration: 60 }),
      new RateLimiterRedis({ storeClient: redis, keyPrefix: "day", points: perDay, duration: 86_400 }),
    ];
  }
  const make = (keyPrefix: string, points: number, duration: number) =>
    new Promise<RateLimiterAbstract>((resolve, reject) => {
      const limiter: RateLimiterPostgres = new RateLimiterPostgres(
        { storeClient: pgShim, storeType: "pool", tableName: "rate_limits", keyPrefix, points, duration },
        (error?: unknown) => (error ? reject(error) : resolve(limiter)),
      );
    });
  return [await make("minute", perMinute, 60), await make("day", perDay, 86_400)];
}
const [minuteLimiter, dayLimiter] = await limiters();
const union = new RateLimiterUnion(minuteLimiter!, dayLimiter!);

type Json = Record<string, unknown> | unknown[];
const app = new Hono().basePath("/v1");

app.use(async (c, next) => {
  const requestId = c.req.header("x-request-id");
  c.header("Cache-Control", "no-store");
  c.header("X-Content-Type-Options", "nosniff");
  c.header("X-Request-Id", requestId !== undefined && REQUEST_ID.test(requestId) ? requestId : crypto.randomUUID());
  const sent = BEARER.exec(c.req.header("authorization") ?? "")?.[1];
  const keyId = sent === undefined ? undefined : keys.get(sent);
  if (keyId === undefined) {
    c.header("WWW-Authenticate", 'Bearer realm="petstore"');
    return c.json({ code: "unauthorized", message: "An API key is required", status: 401 }, 401);
  }
  let results: Record<string, RateLimiterRes>;
  let allowed = true;
  try {
    results = (await union.consume(keyId)) as Record<string, RateLimiterRes>;
  } catch (refused) {
    if (!(refused instanceof Object) || refused instanceof Error) {
      return c.json(
        { code: "service_unavailable", message: "Storage is temporarily unavailable; retry later", status: 503 },
        503,
        { "Retry-After": "1" },
      );
    }
    results = refused as Record<string, RateLimiterRes>;
    allowed = false;
  }
  // The window with fewer requests left; on a tie the one that resets later (the day).
  const minute = results.minute!;
  const day = results.day!;
  const useMinute = minute.remainingPoints < day.remainingPoints;
  const window = useMinute ? minute : day;
  const resetSeconds = Math.ceil(window.msBeforeNext / 1000);
  c.header("X-RateLimit-Limit", String(useMinute ? perMinute : perDay));
  c.header("X-RateLimit-Remaining", String(window.remainingPoints));
  c.header("X-RateLimit-Reset", String(Math.ceil(Date.now() / 1000) + resetSeconds));
  c.header("RateLimit-Policy", policy);
  c.header("RateLimit", `"${useMinute ? "minute" : "day"}";r=${window.remainingPoints};t=${resetSeconds}`);
  if (!allowed) {
    c.header("Retry-After", String(Math.max(1, resetSeconds)));
    return c.json({ code: "rate_limited", message: "Rate limit exceeded", status: 429 }, 429);
  }
  await next();
});

interface Row {
  id: string;
  name: string;
  category_id: string;
  status: string | null;
}
const toPet = (row: Row): Json => ({
  id: Number(row.id),
  name: row.name,
  categoryId: Number(row.category_id),
  ...(row.status !== null && { status: row.status }),
});

app.get("/pets", async (c) => {
  const limit = v.safeParse(Limit, c.req.query("limit") ?? "20");
  if (!limit.success)
    return c.json({ code: "invalid_parameter", message: "limit must be an integer from 1 to 100", status: 400 }, 400);
  const after = Number(c.req.query("cursor") ?? 0);
  const rows = await sql<
    Row[]
  >`SELECT id, name, category_id, status FROM pets WHERE id > ${after} ORDER BY id LIMIT ${limit.output + 1}`;
  const page = rows.slice(0, limit.output).map(toPet);
  if (rows.length > limit.output)
    c.header("Link", `</v1/pets?limit=${limit.output}&cursor=${rows[limit.output - 1]!.id}>; rel="next"`);
  return c.json(page);
});

app.post("/pets", async (c) => {
  if (!JSON_TYPE.test(c.req.header("content-type") ?? "")) {
    return c.json({ code: "unsupported_media_type", message: "Send application/json", status: 415 }, 415);
  }
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    return c.json({ code: "invalid_body", message: "The request body is not valid JSON", status: 400 }, 400);
  }
  const parsed = v.safeParse(NewPet, body);
  if (!parsed.success)
    return c.json(
      {
        code: "invalid_body",
        message: "The request body is invalid",
        status: 400,
        details: issueDetails(parsed.issues),
      },
      400,
    );
  const { name, categoryId, status } = parsed.output;
  const [row] = await sql<
    Row[]
  >`INSERT INTO pets (name, category_id, status) VALUES (${name}, ${categoryId}, ${status ?? null}) RETURNING id, name, category_id, status`;
  const pet = toPet(row!);
  c.header("Location", `/v1/pets/${row!.id}`);
  return c.json(pet, 201);
});

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.BENCH_PORT ?? 0),
  development: false,
  fetch: app.fetch,
});
console.log(JSON.stringify({ event: "listening", port: server.port }));
