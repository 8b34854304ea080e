/**
 * What both framework peers (bench/hono-peer.ts, bench/elysia-peer.ts) do besides routing:
 * the work a team would write by hand without this project, the same in both so that only
 * the framework differs. A Map of keys, a fixed-window minute + day counter in memory
 * (aligned to UTC like the project's), an array of pets, valibot schemas, and the product's
 * full header set on every answer: a request id (the caller's when it is printable ASCII,
 * else `crypto.randomUUID()`), `Cache-Control: no-store`, `X-Content-Type-Options: nosniff`,
 * `X-RateLimit-Limit/Remaining/Reset`, `RateLimit-Policy` and `RateLimit`.
 * The key comes through BENCH_KEY (never argv); its limits are BENCH_PER_MINUTE / BENCH_PER_DAY.
 * The counters and the pets live in memory unless a peer hands `storeIn` another
 * `PeerStorage` (bench/_peer-sqlite.ts: a SQLite file), so that only the storage differs.
 */
import * as v from "valibot";

interface KeyRecord {
  id: string;
  perMinute: number;
  perDay: number;
  /** The `RateLimit-Policy` header, which only changes with the limits. */
  policy: string;
}
interface Counter {
  minuteStart: number;
  minuteCount: number;
  dayStart: number;
  dayCount: number;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;
const BEARER = /^bearer +(\S+) *$/i;
/** application/json or any `+json` type (RFC 6839). */
export const JSON_TYPE = /^\s*(application\/json|[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+\+json)\s*(;.*)?$/i;

export const NewPet = v.strictObject({
  name: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(100)),
  categoryId: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(Number.MAX_SAFE_INTEGER)),
  status: v.optional(v.picklist(["available", "pending", "sold"])),
});
export type Pet = { id: number } & v.InferOutput<typeof NewPet>;
export const Limit = v.pipe(v.string(), v.transform(Number), v.integer(), v.minValue(1), v.maxValue(100));

/** `{ path, message }` per valibot issue, as the product's `details`. */
export const issueDetails = (issues: readonly v.BaseIssue<unknown>[]) =>
  issues.map((issue) => ({ path: v.getDotPath(issue) ?? "", message: issue.message }));

const keys = new Map<string, KeyRecord>();
if (process.env.BENCH_KEY) {
  const perMinute = Number(process.env.BENCH_PER_MINUTE ?? 60);
  const perDay = Number(process.env.BENCH_PER_DAY ?? 1000);
  keys.set(process.env.BENCH_KEY, {
    id: "key_bench",
    perMinute,
    perDay,
    policy: `"minute";q=${perMinute};w=60, "day";q=${perDay};w=86400`,
  });
}
/** Where a peer keeps its rate-limit counters and its pets. Synchronous, as SQLite's drivers on Bun and Deno are. */
export interface PeerStorage {
  /**
   * Counts one request of `keyId` in the windows that start at `minuteStart` and `dayStart`
   * (a window that started earlier is reset), refused or not, as a hand-built fixed-window
   * counter does; the counts including this request.
   */
  hit(keyId: string, minuteStart: number, dayStart: number): { minuteCount: number; dayCount: number };
  /** Stores a validated pet with the next id. */
  insertPet(input: v.InferOutput<typeof NewPet>): Pet;
  /** Up to `limit` pets with ids above `after`, in id order, and whether more follow. */
  pets(after: number, limit: number): { page: Pet[]; more: boolean };
}

/** Counters in a Map, pets in an array. */
export function memoryStorage(): PeerStorage {
  const counters = new Map<string, Counter>();
  const pets: Pet[] = [];
  return {
    hit: (keyId, minuteStart, dayStart) => {
      let counter = counters.get(keyId);
      if (!counter) counters.set(keyId, (counter = { minuteStart, minuteCount: 0, dayStart, dayCount: 0 }));
      if (counter.minuteStart !== minuteStart) Object.assign(counter, { minuteStart, minuteCount: 0 });
      if (counter.dayStart !== dayStart) Object.assign(counter, { dayStart, dayCount: 0 });
      counter.minuteCount++;
      counter.dayCount++;
      return counter;
    },
    insertPet: (input) => {
      const pet: Pet = { id: (pets.at(-1)?.id ?? 0) + 1, ...input };
      pets.push(pet);
      return pet;
    },
    pets: (after, limit) => {
      const start = pets.findIndex((pet) => pet.id > after);
      if (start === -1) return { page: [], more: false };
      return { page: pets.slice(start, start + limit), more: start + limit < pets.length };
    },
  };
}

let storage = memoryStorage();
/** Keeps the counters and pets in `chosen` from now on; called once, before serving. */
export function storeIn(chosen: PeerStorage): void {
  storage = chosen;
}

/** Stores a validated pet with the next id. */
export const insertPet = (input: v.InferOutput<typeof NewPet>): Pet => storage.insertPet(input);

export type Admission = { headers: Record<string, string> } & (
  | { status: 200; keyId: string }
  | { status: 401 | 429; body: { code: string; message: string; status: number } }
);

/**
 * Everything before routing: the headers every answer carries, the key looked up, the
 * request counted. Either admitted (status 200) with its headers, or the refusal to send.
 */
export function admit(requestId: string | null, authorization: string | null, now: number): Admission {
  const headers: Record<string, string> = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Request-Id": requestId !== null && REQUEST_ID.test(requestId) ? requestId : crypto.randomUUID(),
  };
  const sent = authorization === null ? undefined : BEARER.exec(authorization)?.[1];
  const key = sent === undefined ? undefined : keys.get(sent);
  if (!key) {
    headers["WWW-Authenticate"] = 'Bearer realm="petstore"';
    return { status: 401, headers, body: { code: "unauthorized", message: "An API key is required", status: 401 } };
  }
  const minuteStart = now - (now % MINUTE_MS);
  const dayStart = now - (now % DAY_MS);
  const counted = storage.hit(key.id, minuteStart, dayStart);
  const minuteLeft = key.perMinute - counted.minuteCount;
  const dayLeft = key.perDay - counted.dayCount;
  // The window with fewer requests left; on a tie the one that resets later (the day).
  const minute = minuteLeft < dayLeft;
  const limit = minute ? key.perMinute : key.perDay;
  const reset = minute ? minuteStart + MINUTE_MS : dayStart + DAY_MS;
  const allowed = minuteLeft >= 0 && dayLeft >= 0;
  const remaining = Math.max(0, minute ? minuteLeft : dayLeft);
  headers["X-RateLimit-Limit"] = String(limit);
  headers["X-RateLimit-Remaining"] = String(remaining);
  headers["X-RateLimit-Reset"] = String(Math.ceil(reset / 1000));
  headers["RateLimit-Policy"] = key.policy;
  headers.RateLimit = `"${minute ? "minute" : "day"}";r=${remaining};t=${Math.max(0, Math.ceil((reset - now) / 1000))}`;
  if (!allowed) {
    headers["Retry-After"] = String(Math.max(1, Math.ceil((reset - now) / 1000)));
    return { status: 429, headers, body: { code: "rate_limited", message: "Rate limit exceeded", status: 429 } };
  }
  return { status: 200, headers, keyId: key.id };
}

/** A page of pets after `cursor`, and the `Link` to the next page when there is one. */
export function petPage(limit: number, cursor: string | undefined): { page: Pet[]; next?: string } {
  const { page, more } = storage.pets(Number(cursor ?? 0), limit);
  if (!more) return { page };
  return { page, next: `</v1/pets?limit=${limit}&cursor=${page.at(-1)!.id}>; rel="next"` };
}
