/**
 * The peer to beat: the same API built by hand the way a team would without this project.
 * Hono on Bun, a Map of keys, an in-memory fixed-window counter (a minute and a day window,
 * aligned to UTC like the project's), an array of pets, valibot validation, and the headers a
 * careful team would send (rate-limit headers, no-store, nosniff, a request id).
 * Run by bench/run.ts: `bun bench/hono-peer.ts` with BENCH_PORT and BENCH_KEY set (the key in
 * the environment, never on argv); limits are BENCH_PER_MINUTE / BENCH_PER_DAY.
 */
import { Hono } from "hono";
import * as v from "valibot";

interface KeyRecord {
  id: string;
  perMinute: number;
  perDay: number;
}
interface Counter {
  minuteStart: number;
  minuteCount: number;
  dayStart: number;
  dayCount: number;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

const keys = new Map<string, KeyRecord>();
if (process.env.BENCH_KEY) {
  keys.set(process.env.BENCH_KEY, { id: "key_bench", perMinute: Number(process.env.BENCH_PER_MINUTE ?? 60), perDay: Number(process.env.BENCH_PER_DAY ?? 1000) });
}
const counters = new Map<string, Counter>();
const pets: Pet[] = [];

const NewPet = v.strictObject({
  name: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(100)),
  categoryId: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(Number.MAX_SAFE_INTEGER)),
  status: v.optional(v.picklist(["available", "pending", "sold"])),
});
type Pet = { id: number } & v.InferOutput<typeof NewPet>;
const Limit = v.pipe(v.string(), v.transform(Number), v.integer(), v.minValue(1), v.maxValue(100));

type Env = { Variables: { key: KeyRecord } };
const app = new Hono<Env>().basePath("/v1");

app.use(async (c, next) => {
  c.header("Cache-Control", "no-store");
  c.header("X-Content-Type-Options", "nosniff");
  c.header("X-Request-Id", c.req.header("x-request-id") ?? crypto.randomUUID());
  const match = /^Bearer (.+)$/i.exec(c.req.header("authorization") ?? "");
  const key = match ? keys.get(match[1]!) : undefined;
  if (!key) {
    c.header("WWW-Authenticate", 'Bearer realm="petstore"');
    return c.json({ code: "unauthorized", message: "An API key is required", status: 401 }, 401);
  }
  const now = Date.now();
  const minuteStart = now - (now % MINUTE_MS);
  const dayStart = now - (now % DAY_MS);
  let counter = counters.get(key.id);
  if (!counter) counters.set(key.id, (counter = { minuteStart, minuteCount: 0, dayStart, dayCount: 0 }));
  if (counter.minuteStart !== minuteStart) Object.assign(counter, { minuteStart, minuteCount: 0 });
  if (counter.dayStart !== dayStart) Object.assign(counter, { dayStart, dayCount: 0 });
  const minuteLeft = key.perMinute - counter.minuteCount;
  const dayLeft = key.perDay - counter.dayCount;
  const binding = minuteLeft < dayLeft ? { limit: key.perMinute, left: minuteLeft, reset: minuteStart + MINUTE_MS } : { limit: key.perDay, left: dayLeft, reset: dayStart + DAY_MS };
  c.header("X-RateLimit-Limit", String(binding.limit));
  c.header("X-RateLimit-Reset", String(Math.ceil(binding.reset / 1000)));
  if (binding.left <= 0) {
    c.header("X-RateLimit-Remaining", "0");
    c.header("Retry-After", String(Math.max(1, Math.ceil((binding.reset - now) / 1000))));
    return c.json({ code: "rate_limited", message: "Rate limit exceeded", status: 429 }, 429);
  }
  counter.minuteCount++;
  counter.dayCount++;
  c.header("X-RateLimit-Remaining", String(binding.left - 1));
  c.set("key", key);
  await next();
});

app.get("/pets", (c) => {
  const limitParam = c.req.query("limit");
  const limit = limitParam === undefined ? v.safeParse(Limit, "20") : v.safeParse(Limit, limitParam);
  if (!limit.success) return c.json({ code: "invalid_parameter", message: "limit must be an integer from 1 to 100", status: 400 }, 400);
  const after = Number(c.req.query("cursor") ?? 0);
  const start = pets.findIndex((pet) => pet.id > after);
  const page = start === -1 ? [] : pets.slice(start, start + limit.output);
  if (start !== -1 && start + limit.output < pets.length) {
    c.header("Link", `</v1/pets?limit=${limit.output}&cursor=${page.at(-1)!.id}>; rel="next"`);
  }
  return c.json(page);
});

app.post("/pets", async (c) => {
  if (!/^application\/(.+\+)?json\b/i.test(c.req.header("content-type") ?? "")) {
    return c.json({ code: "unsupported_media_type", message: "Send application/json", status: 415 }, 415);
  }
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    return c.json({ code: "invalid_body", message: "The request body is not valid JSON", status: 400 }, 400);
  }
  const parsed = v.safeParse(NewPet, body);
  if (!parsed.success) {
    const details = parsed.issues.map((issue) => ({ path: v.getDotPath(issue) ?? "", message: issue.message }));
    return c.json({ code: "invalid_body", message: "The request body is invalid", status: 400, details }, 400);
  }
  const pet: Pet = { id: (pets.at(-1)?.id ?? 0) + 1, ...parsed.output };
  pets.push(pet);
  c.header("Location", `/v1/pets/${pet.id}`);
  return c.json(pet, 201);
});

const server = Bun.serve({ hostname: "127.0.0.1", port: Number(process.env.BENCH_PORT ?? 0), development: false, fetch: app.fetch });
console.log(JSON.stringify({ event: "listening", port: server.port }));
