import { memoryAdapters } from "@petstore/adapters/memory";
import fc from "fast-check";
import * as v from "valibot";
import { beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "./keys/issue-api-key.js";
import { createPetstore, type Petstore } from "./app.js";
import { ERROR_STATUS } from "./errors.js";
import { MAX_BODY_BYTES } from "./_json-body.js";
import { MAX_ID, ORDER_STATUSES, OrderSchema, PET_STATUSES, PetSchema } from "./schemas.js";

/**
 * Property-based tests of input handling: whatever a client sends, the answer is one of the
 * contract's statuses with a well-formed body, never a 500 and never a throw.
 */

const NOW = Date.UTC(2027, 5, 1, 12, 0, 0);
/** Limits no run can reach, so a 429 would be a bug, not the limiter doing its job. */
const UNREACHABLE = { perMinute: 1e12, perDay: 1e12 };
const BASE = "http://localhost/v1";

/** Unexpected errors the pipeline caught: each would have been a 500. */
const internalErrors: unknown[] = [];
let petstore: Petstore;
let key: string;

beforeAll(async () => {
  const adapters = memoryAdapters({ clock: () => NOW });
  ({ key } = await issueApiKey(adapters.keys, { plan: "free" }, { now: NOW }));
  petstore = createPetstore({
    ...adapters,
    clock: () => NOW,
    plans: { free: UNREACHABLE, pro: UNREACHABLE, business: UNREACHABLE, enterprise: UNREACHABLE },
    onError: (error) => internalErrors.push(error),
  });
  for (const [i, status] of ["available", "pending", "sold", undefined, "sold"].entries()) {
    await adapters.store.createPet(
      status ? { name: `Seed ${i}`, categoryId: 1, status: status as "sold" } : { name: `Seed ${i}`, categoryId: 1 },
    );
    await adapters.store.createOrder({ petId: 1, quantity: i + 1, status: ORDER_STATUSES[i % 3]!, complete: false });
  }
});

const auth = () => ({ Authorization: `Bearer ${key}` });
const send = (request: Request) => petstore.fetch(request, { clientAddress: "192.0.2.10" });

const ERROR_FIELDS = new Set(["code", "message", "status", "details"]);

/** Asserts the answer is one of `allowed`, well-formed, and that nothing failed inside. Answers the status and parsed body. */
async function expectContractAnswer(
  request: Request,
  allowed: readonly number[],
): Promise<{ status: number; body: unknown }> {
  const method = request.method;
  internalErrors.length = 0;
  const response = await send(request);
  expect(
    internalErrors.map((error) => (error instanceof Error ? error.stack : String(error))),
    `${method} ${request.url}`,
  ).toEqual([]);
  expect(allowed, `${method} ${request.url} answered ${response.status}`).toContain(response.status);
  expect(response.headers.get("x-request-id")).toBeTruthy();
  expect(response.headers.get("x-ratelimit-remaining")).toMatch(/^[0-9]+$/);
  const text = await response.text();
  if (method === "HEAD") {
    expect(text).toBe("");
    return { status: response.status, body: undefined };
  }
  expect(response.headers.get("content-type")).toBe("application/json");
  const body: unknown = JSON.parse(text);
  if (response.status >= 400) expectErrorBody(body, response.status);
  return { status: response.status, body };
}

/** `{ code, message, status, details? }`, status equal to the HTTP status, code from the catalogue. */
function expectErrorBody(body: unknown, status: number): void {
  expect(typeof body === "object" && body !== null && !Array.isArray(body)).toBe(true);
  const error = body as Record<string, unknown>;
  expect(Object.keys(error).filter((field) => !ERROR_FIELDS.has(field))).toEqual([]);
  expect(error.status).toBe(status);
  expect(ERROR_STATUS[error.code as keyof typeof ERROR_STATUS]).toBe(status);
  expect(typeof error.message === "string" && error.message.length > 0).toBe(true);
  if ("details" in error) {
    expect(Array.isArray(error.details)).toBe(true);
    for (const detail of error.details as unknown[]) {
      expect(detail).toEqual({ path: expect.any(String), message: expect.any(String) });
    }
  }
}

const postPet = (body: BodyInit, headers: Record<string, string> = {}) =>
  new Request(`${BASE}/pets`, {
    method: "POST",
    body,
    headers: { ...auth(), "Content-Type": "application/json", ...headers },
  });

/** Mostly valid, sometimes wrong: each field and the whole object reach both outcomes often. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<U>) =>
  fc.oneof({ weight: 4, arbitrary: valid }, { weight: 1, arbitrary: invalid });

/** Objects close to a NewPet, so the 201 path and each field's checks are reached often. */
const nearlyNewPet = fc
  .tuple(
    fc.record(
      {
        name: mostly(
          fc.oneof(
            fc.string({ unit: "grapheme", minLength: 1, maxLength: 100 }),
            fc.constantFrom("  Rex  ", "\u00a0Rex\t", "🐕".repeat(100)),
          ),
          fc.oneof(
            fc.string({ unit: "binary", maxLength: 120 }),
            fc.constantFrom("", " ", "a\u0000b", "a\u0085b", "a\ud800b", "\udc15", "x".repeat(101), "🐕".repeat(101)),
            fc.jsonValue(),
          ),
        ),
        categoryId: mostly(
          fc.oneof(fc.integer({ min: 1, max: MAX_ID }), fc.constantFrom(1, MAX_ID)),
          fc.oneof(fc.constantFrom(0, -1, 1.5, MAX_ID + 1, 1e300, "1"), fc.double(), fc.jsonValue()),
        ),
        status: mostly(
          fc.constantFrom(...PET_STATUSES),
          fc.oneof(fc.constantFrom("lost", "", "SOLD", null), fc.jsonValue()),
        ),
      },
      { requiredKeys: [] },
    ),
    mostly(
      fc.constant({}),
      fc.dictionary(
        fc.oneof(fc.constantFrom("id", "Name", "__proto__", "constructor"), fc.string()),
        fc.jsonValue({ maxDepth: 1 }),
        { minKeys: 1, maxKeys: 2 },
      ),
    ),
  )
  .map(([fields, extra]) => ({ ...extra, ...fields }));

describe("input handling", () => {
  it("answers any JSON value as a createPet body with 201 exactly when it is a valid NewPet, else 400", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) }, { weight: 3, arbitrary: nearlyNewPet }),
        async (value) => {
          const text = JSON.stringify(value);
          const { status, body } = await expectContractAnswer(postPet(text), [201, 400, 413]);
          if (new TextEncoder().encode(text).length > MAX_BODY_BYTES) return expect(status).toBe(413);
          const expected = validNewPet(value);
          if (!expected) {
            expect(status).toBe(400);
            expect(body).toMatchObject({ code: "invalid_body", details: expect.arrayContaining([expect.anything()]) });
            return;
          }
          expect(status).toBe(201);
          expect(body).toEqual({ id: expect.any(Number), ...expected });
        },
      ),
      { numRuns: 400 },
    );
  });

  it("answers any text as a createPet body with 201, 400, or 413 exactly when it is over the size limit", async () => {
    const validText = JSON.stringify({ name: "Rex", categoryId: 1 });
    const text = fc.oneof(
      fc.string({ unit: "binary", maxLength: 300 }),
      fc.string({ unit: "grapheme", maxLength: 300 }),
      // The valid body with one character dropped, and padded up to either side of the limit.
      fc.nat({ max: validText.length - 1 }).map((i) => validText.slice(0, i) + validText.slice(i + 1)),
      fc
        .integer({ min: MAX_BODY_BYTES - validText.length - 8, max: MAX_BODY_BYTES - validText.length + 8 })
        .map((n) => " ".repeat(n) + validText),
      fc
        .integer({ min: 0, max: 8 })
        .map((n) => `{"name":"${"é".repeat((MAX_BODY_BYTES - 30) / 2 + n)}","categoryId":1}`),
    );
    await fc.assert(
      fc.asyncProperty(text, async (body) => {
        const { status } = await expectContractAnswer(postPet(body), [201, 400, 413]);
        expect(status === 413).toBe(new TextEncoder().encode(body).length > MAX_BODY_BYTES);
      }),
      { numRuns: 300 },
    );
  });

  it("answers any bytes as a createPet body, invalid UTF-8 included, with 201, 400 or 413", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 300 }),
        async (bytes) => void (await expectContractAnswer(postPet(bytes), [201, 400, 413])),
      ),
      { numRuns: 200 },
    );
  });

  it("answers any Content-Type on createPet with 201, 400 or 415", async () => {
    const contentType = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.constantFrom(
        "application/json",
        "APPLICATION/JSON; charset=utf-8",
        "application/merge-patch+json",
        "text/plain",
        "application/jsonx",
        "json",
        "",
      ),
    );
    await fc.assert(
      fc.asyncProperty(contentType, async (type) => {
        await expectContractAnswer(
          postPet(JSON.stringify({ name: "Rex", categoryId: 1 }), { "Content-Type": type }),
          [201, 400, 415],
        );
      }),
    );
  });

  it("answers any Idempotency-Key header with 201 exactly when it is 1 to 255 printable ASCII characters but the comma, else 400", async () => {
    const headerText = fc.oneof(
      fc.string({ unit: "binary-ascii", maxLength: 300 }),
      fc.integer({ min: 250, max: 260 }).map((n) => "k".repeat(n)),
    );
    await fc.assert(
      fc.asyncProperty(
        headerText.filter((text) => !/[\0\r\n]/.test(text)),
        async (idempotencyKey) => {
          const request = postPet(JSON.stringify({ name: "Rex", categoryId: 1 }), {
            "Idempotency-Key": idempotencyKey,
          });
          // Headers lose surrounding spaces and tabs in transit (Fetch: header value normalisation).
          const sent = request.headers.get("idempotency-key")!;
          const { status } = await expectContractAnswer(request, [201, 400]);
          expect(status).toBe(/^[\x20-\x7e]{1,255}$/.test(sent) && !sent.includes(",") ? 201 : 400);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("request takes a URL and a RequestInit as fetch does, as a test author calls it", async () => {
    const created = await petstore.request(`${BASE}/pets`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    const listed = await petstore.request(new URL(`${BASE}/pets`), { headers: { Authorization: `Bearer ${key}` } });
    expect(listed.status).toBe(200);
    expect(listed.headers.get("x-ratelimit-limit")).toBeTruthy();
  });

  it("answers a repeated Idempotency-Key header 400, never taking the joined values for one key", async () => {
    const headers = new Headers({ "Content-Type": "application/json", Authorization: `Bearer ${key}` });
    headers.append("Idempotency-Key", "first");
    headers.append("Idempotency-Key", "second");
    const response = await petstore.fetch(
      new Request(`${BASE}/pets`, { method: "POST", headers, body: JSON.stringify({ name: "Rex", categoryId: 1 }) }),
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      code: "invalid_parameter",
      details: [{ path: "Idempotency-Key", message: expect.stringContaining("must be sent once") }],
    });
  });

  it("answers any Authorization header with 200 or 401", async () => {
    const header = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc.string({ maxLength: 60 }).map((token) => `Bearer ${token}`),
      fc.constantFrom(
        "bearer",
        "Bearer ",
        "Basic abc",
        "BEARER {key}",
        "bearer   {key}",
        "Bearer {key} extra",
        "Bearer {key}x",
      ),
      fc.nat().map((i) => `Bearer ${withTypo(key, i)}`),
    );
    await fc.assert(
      fc.asyncProperty(header, async (value) => {
        const request = new Request(`${BASE}/pets`, { headers: { Authorization: value.replace("{key}", key) } });
        await expectContractAnswer(request, [200, 401]);
      }),
    );
  });

  for (const [path, rowSchema, statuses] of [
    ["/pets", PetSchema, PET_STATUSES],
    ["/store/orders", OrderSchema, ORDER_STATUSES],
  ] as const) {
    const value = fc.oneof(
      fc.string({ unit: "binary", maxLength: 20 }),
      fc.integer({ min: -5, max: 120 }).map(String),
      fc.constantFrom<string>(...statuses, "", "1e1", "0x10", " 5", "5 ", "+5", "05", "Infinity", "NaN"),
      fc.oneof(fc.integer({ min: -2, max: 12 }), fc.constantFrom(MAX_ID, MAX_ID + 1, 1e16)).map(cursorAfter),
    );
    const parameters = fc
      .array(fc.tuple(fc.constantFrom("limit", "status", "cursor", "other", "LIMIT"), value), { maxLength: 4 })
      .map((pairs) => new URLSearchParams(pairs).toString());
    const query = fc.oneof(
      { weight: 3, arbitrary: parameters },
      { weight: 1, arbitrary: fc.webQueryParameters() },
      { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
    );

    it(`answers any query string on GET ${path} with 200 (a page of valid rows) or 400`, async () => {
      await fc.assert(
        fc.asyncProperty(query, async (search) => {
          const request = new Request(`${BASE}${path}?${search}`, { headers: auth() });
          const { status, body } = await expectContractAnswer(request, [200, 400]);
          expect(status).toBe(validPageQuery(new URL(request.url).searchParams, statuses) ? 200 : 400);
          if (status === 200) {
            expect(Array.isArray(body)).toBe(true);
            const rows = body as { id: number; status?: string }[];
            const params = new URL(request.url).searchParams;
            expect(rows.length).toBeLessThanOrEqual(Number(params.get("limit") ?? 20));
            for (const row of rows) expect(v.is(rowSchema, row)).toBe(true);
            expect(rows.map((row) => row.id)).toEqual(rows.map((row) => row.id).sort((a, b) => a - b));
            const wanted = params.get("status");
            if (wanted !== null) expect(rows.every((row) => row.status === wanted)).toBe(true);
          }
        }),
        { numRuns: 300 },
      );
    });
  }

  it("answers any petId with 200 or 404 when it is an integer from 1 to MAX_ID, else 400", async () => {
    const petId = fc.oneof(
      fc
        .oneof(
          fc.integer({ min: 1, max: 8 }),
          fc.integer({ min: 1, max: MAX_ID }),
          fc.constantFrom(0, MAX_ID, MAX_ID + 1),
        )
        .map(String),
      fc.constantFrom("01", "-1", "+1", "1.0", "1e0", "0x1", "%31", "1%20", "Infinity", "99999999999999999"),
      fc.webSegment().filter((segment) => segment !== "" && segment !== "." && segment !== ".."),
    );
    await fc.assert(
      fc.asyncProperty(petId, async (id) => {
        const { status } = await expectContractAnswer(
          new Request(`${BASE}/pets/${id}`, { headers: auth() }),
          [200, 400, 404],
        );
        const valid = /^[0-9]{1,16}$/.test(id) && Number(id) >= 1 && Number(id) <= MAX_ID;
        expect(valid ? [200, 404] : [400]).toContain(status);
      }),
      { numRuns: 300 },
    );
  });

  /** Paths near the served ones as often as arbitrary ones: known prefixes, odd ids, dot segments, encodings. */
  const pathUnderBase = fc.oneof(
    fc.constantFrom(
      "/pets",
      "/pets/",
      "/pets/1",
      "/pets/2",
      "/pets/abc",
      "/pets/1/x",
      "/store/orders",
      "/store",
      "/openapi.json",
      "/PETS",
      "/",
    ),
    fc.webPath(),
    fc
      .array(
        fc.oneof(
          {
            weight: 3,
            arbitrary: fc.constantFrom(
              "pets",
              "store",
              "orders",
              "openapi.json",
              "",
              "..",
              "%2e%2e",
              ".",
              "1",
              "0",
              "-1",
              "01",
              "1.0",
              "9007199254740992",
              "%00",
              "%2F",
            ),
          },
          { weight: 1, arbitrary: fc.webSegment() },
          { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 12 }).map(encodeURIComponent) },
        ),
        { minLength: 1, maxLength: 4 },
      )
      .map((parts) => `/${parts.join("/")}`),
  );

  it("answers any path under /v1 with any method with a contract status", async () => {
    const method = fc.oneof(
      fc.constantFrom("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "get", "head", "post"),
      // Names of Object.prototype members: a method lookup must not find them.
      fc.constantFrom("valueOf", "constructor", "toString", "__proto__", "hasOwnProperty"),
      fc.stringMatching(/^[A-Za-z]{1,10}$/).filter((m) => !["CONNECT", "TRACE", "TRACK"].includes(m.toUpperCase())),
    );
    await fc.assert(
      fc.asyncProperty(pathUnderBase, method, fc.boolean(), async (p, m, withJsonType) => {
        const headers: Record<string, string> = { ...auth() };
        if (withJsonType) headers["Content-Type"] = "application/json";
        await expectContractAnswer(new Request(`${BASE}${p}`, { method: m, headers }), [200, 400, 404, 405, 415]);
      }),
      { numRuns: 500 },
    );
  });

  it("answers anonymous requests for any path under /v1 with 200 (the document), 401 or 405 only", async () => {
    await fc.assert(
      fc.asyncProperty(pathUnderBase, fc.constantFrom("GET", "HEAD", "POST", "DELETE"), async (p, m) => {
        await expectContractAnswer(new Request(`${BASE}${p}`, { method: m }), [200, 401, 405]);
      }),
    );
  });
});

/**
 * The rules of docs/design.md for a NewPet, written out independently of the valibot schema: the
 * pet it stores (name trimmed), or undefined when the body must be refused.
 */
function validNewPet(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { name, categoryId, status, ...unknown } = value as Record<string, unknown>;
  if (Object.keys(unknown).length > 0) return undefined;
  if (typeof name !== "string") return undefined;
  const trimmed = name.trim();
  if (trimmed.length === 0 || [...trimmed].length > 100 || /\p{Cc}/u.test(trimmed)) return undefined;
  // Not well-formed Unicode (an unpaired surrogate): UTF-8 cannot carry it there and back.
  if (new TextDecoder().decode(new TextEncoder().encode(trimmed)) !== trimmed) return undefined;
  if (typeof categoryId !== "number" || !Number.isInteger(categoryId) || categoryId < 1 || categoryId > MAX_ID)
    return undefined;
  if ("status" in (value as object) && !(PET_STATUSES as readonly unknown[]).includes(status)) return undefined;
  return status === undefined ? { name: trimmed, categoryId } : { name: trimmed, categoryId, status };
}

/** The cursor the service issues for "the rows after `id`" (base64url of `after:<id>`, unpadded). */
function cursorAfter(id: number): string {
  return btoa(`after:${id}`).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
}

/**
 * The paging rules of docs/design.md, written out: `limit` digits for 1..100, `status` from the
 * enumeration, `cursor` one the service issued (for an id 1..MAX_ID); none repeated or empty.
 */
function validPageQuery(params: URLSearchParams, statuses: readonly string[]): boolean {
  const single = (name: string) => {
    const values = params.getAll(name);
    return values.length === 0 ? undefined : values.length === 1 && values[0] !== "" ? values[0]! : null;
  };
  const limit = single("limit");
  const status = single("status");
  const cursor = single("cursor");
  if (limit === null || status === null || cursor === null) return false;
  if (limit !== undefined && !(/^[0-9]{1,16}$/.test(limit) && Number(limit) >= 1 && Number(limit) <= 100)) return false;
  if (status !== undefined && !statuses.includes(status)) return false;
  if (cursor === undefined) return true;
  const id = Number(/^after:([1-9][0-9]*)$/.exec(atobOrEmpty(cursor))?.[1]);
  return Number.isSafeInteger(id) && id >= 1 && id <= MAX_ID && cursor === cursorAfter(id);
}

function atobOrEmpty(text: string): string {
  try {
    return atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    return "";
  }
}

/** `text` with one character after the `psk_` prefix changed: a typo. */
function withTypo(text: string, index: number): string {
  const at = 4 + (index % (text.length - 4));
  return text.slice(0, at) + (text[at] === "a" ? "b" : "a") + text.slice(at + 1);
}
