import { ERROR_STATUS } from "@petstore/core";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADAPTER_KITS, BASE, openWorld, type World } from "../conformance/harness.js";
import { ensureBinary } from "../e2e/_binary.js";
import { binaryServe, cleanUp, createKey, type Server, startServer, tempDatabaseUrl } from "../e2e/_processes.js";
import { parseResponse, rawExchange, rawRequest } from "../e2e/_raw-http.js";

/**
 * HTTP fuzzing of the whole request path: random methods, paths, query strings, headers and
 * bodies, in process against every adapter kit and over raw sockets against the compiled
 * binary. Whatever arrives, every answer under /v1 carries the contract's headers, an Error
 * body whose status is the HTTP status when it fails, never a 5xx (no fault is injected
 * here), and comes within a time limit. Runs are counted, and each has a deadline.
 */

/** One request as a client would put it on the wire. */
interface FuzzRequest {
  method: string;
  /** Under /v1, with its query string. */
  target: string;
  headers: [string, string][];
  body?: Uint8Array<ArrayBuffer>;
}

/** What every answer is checked on, wherever it came from. */
interface Answer {
  status: number;
  header: (name: string) => string | null;
  /** The body as UTF-8 text; "" for HEAD. */
  text: string;
}

/** A key no run can exhaust: a 429 for it would be a bug (anonymous callers of the binary get the Free plan's). */
const UNLIMITED = { plan: "enterprise", perMinute: 1_000_000_000, perDay: 1_000_000_000 } as const;
const KEY = "{key}";

const printable = (max: number) => fc.stringMatching(new RegExp(`^[\\x20-\\x7e]{0,${max}}$`));

const segment = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "pets",
      "store",
      "orders",
      "openapi.json",
      "1",
      "2",
      "0",
      "-1",
      "01",
      "9007199254740992",
      "abc",
      "",
      "..",
      "%2e%2e",
      "%00",
      "%2F",
    ),
  },
  { weight: 1, arbitrary: fc.webSegment() },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map(encodeURIComponent) },
);
const path = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom("/pets", "/pets", "/pets", "/pets/1", "/pets/2", "/store/orders", "/openapi.json"),
  },
  { weight: 2, arbitrary: fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join("/")}`) },
);
const queryValue = fc.oneof(
  fc.constantFrom(
    "1",
    "20",
    "100",
    "101",
    "0",
    "-1",
    "abc",
    "",
    "available",
    "sold",
    "placed",
    "dead",
    "YWZ0ZXI6MQ",
    "garbage",
  ),
  fc.string({ maxLength: 10 }),
);
const query = fc.oneof(
  { weight: 2, arbitrary: fc.constant("") },
  {
    weight: 3,
    arbitrary: fc
      .array(fc.tuple(fc.constantFrom("limit", "status", "cursor", "other"), queryValue), {
        minLength: 1,
        maxLength: 4,
      })
      .map((pairs) => `?${new URLSearchParams(pairs)}`),
  },
  { weight: 1, arbitrary: fc.webQueryParameters().map((search) => `?${search}`) },
);

/** Mostly valid, sometimes wrong: so that creates succeed often and each check is reached. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<U>) =>
  fc.oneof({ weight: 5, arbitrary: valid }, { weight: 1, arbitrary: invalid });

const nearlyNewPet = fc
  .tuple(
    fc.record(
      {
        name: mostly(
          fc.oneof(fc.constantFrom("Rex", "  Rex "), fc.string({ unit: "grapheme", minLength: 1, maxLength: 20 })),
          fc.oneof(fc.constantFrom("", "a\u0007b", "\ud800", "x".repeat(101)), fc.jsonValue({ maxDepth: 1 })),
        ),
        categoryId: mostly(
          fc.integer({ min: 1, max: 9007199254740991 }),
          fc.oneof(fc.constantFrom(0, 9007199254740992, 1.5, "1"), fc.jsonValue({ maxDepth: 1 })),
        ),
        status: mostly(fc.constantFrom("available", "pending", "sold"), fc.constantFrom("lost", null)),
      },
      { requiredKeys: ["name", "categoryId"] },
    ),
    mostly(
      fc.constant({}),
      fc.oneof(fc.record({ id: fc.nat() }), fc.constant({ name: undefined }), fc.constant({ categoryId: undefined })),
    ),
  )
  .map(([pet, extra]) => ({ ...pet, ...extra }));
const encoder = new TextEncoder();
const body = fc.oneof(
  { weight: 4, arbitrary: nearlyNewPet.map((pet) => encoder.encode(JSON.stringify(pet))) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => encoder.encode(JSON.stringify(value))) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 60 }).map((text) => encoder.encode(text)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 60 }).map((bytes) => new Uint8Array(bytes)) },
  { weight: 1, arbitrary: fc.constant(encoder.encode(JSON.stringify({ name: "x".repeat(17 * 1024), categoryId: 1 }))) },
);

/**
 * Extra headers leave alone the ones that frame a request on the wire (the fuzz keeps framing
 * honest; a client lying about lengths is e2e/http-edges' subject) and the ones set above.
 */
const RESERVED = new Set([
  "content-length",
  "transfer-encoding",
  "host",
  "connection",
  "expect",
  "upgrade",
  "te",
  "trailer",
  "keep-alive",
  "authorization",
  "content-type",
  "x-request-id",
  "idempotency-key",
]);
const extraHeader = fc.tuple(
  fc.stringMatching(/^[A-Za-z0-9-]{1,20}$/).filter((name) => !RESERVED.has(name.toLowerCase())),
  printable(40),
);

/**
 * A create as a client means it, with a body near a NewPet and, sometimes, one of a few
 * Idempotency-Keys (reused with other bodies: 422; with the same: a replay): so that storage
 * writes, not only refusals, are fuzzed.
 */
const createRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({ pet: nearlyNewPet, idempotencyKey: fc.option(fc.constantFrom("k1", "k2", "k3"), { freq: 2 }) })
  .map(({ pet, idempotencyKey }) => {
    const headers: [string, string][] = [
      ["Authorization", `Bearer ${KEY}`],
      ["Content-Type", "application/json"],
    ];
    if (idempotencyKey !== null) headers.push(["Idempotency-Key", idempotencyKey]);
    return { method: "POST", target: "/v1/pets", headers, body: encoder.encode(JSON.stringify(pet)) };
  });

/** `methods`: what the host can be sent (Bun drops unknown method names before the API sees them). */
function fuzzRequest(methods: fc.Arbitrary<string>): fc.Arbitrary<FuzzRequest> {
  return fc.oneof({ weight: 3, arbitrary: anyRequest(methods) }, { weight: 1, arbitrary: createRequest });
}

function anyRequest(methods: fc.Arbitrary<string>): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      method: methods,
      target: fc.tuple(path, query).map(([p, q]) => `/v1${p}${q}`),
      authorization: fc.oneof(
        { weight: 10, arbitrary: fc.constant(`Bearer ${KEY}`) },
        { weight: 2, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: printable(60) },
        { weight: 1, arbitrary: printable(45).map((token) => `Bearer psk_${token}`) },
      ),
      contentType: fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom("application/json", "application/merge-patch+json; charset=utf-8") },
        { weight: 1, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: printable(40) },
      ),
      requestId: fc.option(fc.oneof(printable(140), fc.uuid()), { freq: 2 }),
      idempotencyKey: fc.option(fc.oneof(printable(40), printable(260)), { freq: 3 }),
      extra: fc.array(extraHeader, { maxLength: 3 }),
      body: fc.option(body, { freq: 6 }),
    })
    .map(({ method, target, authorization, contentType, requestId, idempotencyKey, extra, body }) => {
      const headers: [string, string][] = [];
      if (authorization !== undefined) headers.push(["Authorization", authorization]);
      if (contentType !== undefined) headers.push(["Content-Type", contentType]);
      if (requestId !== null) headers.push(["X-Request-Id", requestId]);
      if (idempotencyKey !== null) headers.push(["Idempotency-Key", idempotencyKey]);
      headers.push(...extra);
      // Fetch forbids a body on GET and HEAD; other methods get one or none.
      const request: FuzzRequest = { method, target, headers };
      if (body !== null && !["GET", "HEAD"].includes(method.toUpperCase())) request.body = body;
      return request;
    });
}

const withKey = (headers: [string, string][], key: string) =>
  headers.map(([name, value]): [string, string] => [name, value.replace(KEY, key)]);

/** The contract for any answer under /v1, with no fault injected. */
function expectContractAnswer(request: FuzzRequest, answer: Answer): void {
  const where = `${request.method} ${request.target} -> ${answer.status} ${answer.text.slice(0, 200)}`;
  expectNoServerError(request, answer);
  for (const name of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"])
    expect(answer.header(name), `${name}: ${where}`).toMatch(/^[0-9]+$/);
  expect(answer.header("ratelimit-policy"), where).toMatch(/^"minute";q=[0-9]+;w=60, "day";q=[0-9]+;w=86400$/);
  expect(answer.header("ratelimit"), where).toMatch(/^"(minute|day)";r=[0-9]+;t=[0-9]+$/);
  expect(answer.header("content-type"), where).toBe("application/json");
  expect(answer.header("cache-control"), where).toBe("no-store");
  expect(answer.header("x-content-type-options"), where).toBe("nosniff");
  const sentId = request.headers.find(([name]) => name === "X-Request-Id")?.[1].trim();
  if (sentId !== undefined && /^[\x21-\x7e]{1,128}$/.test(sentId))
    expect(answer.header("x-request-id"), where).toBe(sentId);
  else expect(answer.header("x-request-id"), where).toMatch(/^[\x21-\x7e]{1,128}$/);
  if (answer.status === 429) {
    expect(request.headers, where).not.toContainEqual(["Authorization", `Bearer ${KEY}`]);
    expect(Number(answer.header("retry-after")), where).toBeGreaterThanOrEqual(1);
  }
  if (answer.status === 405) expect(answer.header("allow"), where).toMatch(/^[A-Z]+(, [A-Z]+)*$/);
  if (answer.status === 401) expect(answer.header("www-authenticate"), where).toMatch(/^Bearer realm="petstore"/);
  if (request.method.toUpperCase() === "HEAD") {
    // RFC 9110 section 9.3.2: the length of the body GET would send (never empty here).
    expect(answer.header("content-length"), where).toMatch(/^[1-9][0-9]*$/);
    expect(answer.text, where).toBe("");
    return;
  }
  const parsed: unknown = JSON.parse(answer.text);
  if (answer.status < 400) return;
  const error = parsed as { code: keyof typeof ERROR_STATUS; message: unknown; status: unknown; details?: unknown };
  expect(
    Object.keys(error).filter((field) => !["code", "message", "status", "details"].includes(field)),
    where,
  ).toEqual([]);
  expect(error.status, where).toBe(answer.status);
  expect(ERROR_STATUS[error.code], where).toBe(answer.status);
  expect(typeof error.message === "string" && error.message !== "", where).toBe(true);
}

function expectNoServerError(request: FuzzRequest, answer: Answer): void {
  const where = `${request.method} ${request.target} -> ${answer.status} ${answer.text.slice(0, 200)}`;
  expect(answer.status, where).toBeGreaterThanOrEqual(200);
  expect(answer.status, where).toBeLessThan(500);
}

/** Fetch's Request refuses these methods outright; anything else is a token a client may send. */
const inProcessMethods = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("GET", "POST") },
  {
    weight: 3,
    arbitrary: fc.constantFrom("HEAD", "PUT", "PATCH", "DELETE", "OPTIONS", "get", "post", "valueOf", "__proto__"),
  },
  {
    weight: 1,
    arbitrary: fc
      .stringMatching(/^[A-Za-z]{1,10}$/)
      .filter((method) => !["CONNECT", "TRACE", "TRACK"].includes(method.toUpperCase())),
  },
);

describe.each(ADAPTER_KITS)("HTTP fuzz in process on $name", (kit) => {
  let world: World;
  let key: string;
  beforeAll(async () => {
    // Anonymous callers get the Free plan: unlimited too, so every run reaches routing.
    world = await openWorld(kit, { plans: { free: { perMinute: 1e9, perDay: 1e9 } } });
    key = await world.key(UNLIMITED);
  });
  afterAll(() => world.close());

  it("answers every request with the contract's headers and body, never a 5xx, each within 5 s", async () => {
    await fc.assert(
      fc.asyncProperty(fuzzRequest(inProcessMethods), async (request) => {
        const init: RequestInit = { method: request.method, headers: withKey(request.headers, key) };
        if (request.body) init.body = request.body;
        const response = await world.petstore.fetch(new Request(BASE + request.target, init), {
          clientAddress: "198.51.100.9",
        });
        const answer = {
          status: response.status,
          header: (name: string) => response.headers.get(name),
          text: await response.text(),
        };
        expect(world.internalErrors.map(String), `${request.method} ${request.target}`).toEqual([]);
        expectContractAnswer(request, answer);
      }),
      { numRuns: kit.name === "memory" ? 1_000 : 500, plugins: [fc.timeout(5_000)] },
    );
  }, 60_000);
});

describe("HTTP fuzz against the binary over raw sockets", () => {
  let server: Server;
  let port: number;
  let key: string;

  beforeAll(async () => {
    ensureBinary();
    const db = tempDatabaseUrl("fuzz.db");
    ({ key } = await createKey(db, ["--plan", "enterprise", "--per-minute", "1000000000", "--per-day", "1000000000"]));
    server = await startServer(binaryServe(db));
    port = Number(new URL(server.url).port);
  }, 120_000);
  afterAll(cleanUp);

  // Bun closes the connection on a method name it does not know, before the API sees it.
  const methods = fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom("GET", "POST") },
    { weight: 1, arbitrary: fc.constantFrom("HEAD", "PUT", "PATCH", "DELETE", "OPTIONS", "PROPFIND") },
  );

  it("answers every request with the contract's headers and body, never a 5xx, each within 5 s", async () => {
    await fc.assert(
      fc.asyncProperty(fuzzRequest(methods), async (request) => {
        const headers = Object.fromEntries([...withKey(request.headers, key), ["Connection", "close"]]);
        const bytes = rawRequest(request.method, request.target, headers, request.body ?? "");
        const exchange = await rawExchange(port, bytes, { after: "wait", deadlineMs: 5_000 });
        expect(exchange.closedBy, `${request.method} ${request.target}`).toBe("server");
        const { status, headers: received, body } = parseResponse(exchange.received);
        // Every answer is framed by its length (HEAD: the GET body's).
        if (request.method !== "HEAD") expect(received["content-length"]).toBe(String(body.length));
        const answer = {
          status,
          header: (name: string) => received[name] ?? null,
          text: Buffer.from(body, "latin1").toString("utf8"),
        };
        // Dot segments ("/v1/../pets", "%2e%2e" too) can lead out of the API, as URL parsing says.
        const pathname = new URL(request.target, "http://petstore.test").pathname;
        if (pathname === "/v1" || pathname.startsWith("/v1/")) expectContractAnswer(request, answer);
        else expectNoServerError(request, answer);
      }),
      { numRuns: 400, plugins: [fc.timeout(6_000)] },
    );
    expect(server.stderr.filter((line) => line.includes('"level":"error"'))).toEqual([]);
  }, 90_000);
});
