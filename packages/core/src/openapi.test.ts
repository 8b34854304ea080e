import SwaggerParser from "@apidevtools/swagger-parser";
import { memoryAdapters } from "@petstore/adapters/memory";
import { beforeAll, describe, expect, it } from "vitest";
import { type IssueApiKeyInput, issueApiKey } from "./keys/issue-api-key.js";
import { createPetstore } from "./app.js";
import type { PetstoreOptions } from "./options.js";
import { GET_PET_SUNSET_AT } from "./context.js";
import { StorageUnavailableError } from "./errors.js";
import { MAX_BODY_BYTES } from "./_json-body.js";
import type { IdempotencyStore, PetStore } from "./ports.js";
import { ROUTES } from "./routes.js";
import {
  ErrorBodySchema,
  MAX_ID,
  NewPetSchema,
  ORDER_STATUSES,
  OrderSchema,
  PET_STATUSES,
  PetSchema,
} from "./schemas.js";

// biome-ignore lint/suspicious/noExplicitAny: the test walks an OpenAPI document of any shape
type Json = Record<string, any>;

const NOW = Date.UTC(2027, 5, 1, 12, 0, 0);
const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** The document as a client gets it: through the real pipeline, without a key. */
async function servedDocument(basePath?: string): Promise<Json> {
  const petstore = createPetstore({
    ...memoryAdapters(),
    clock: () => NOW,
    ...(basePath === undefined ? {} : { basePath }),
  });
  const response = await petstore.fetch(new Request(`http://localhost${basePath ?? "/v1"}/openapi.json`));
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("application/json");
  return response.json();
}

/** The OpenAPI form of an itty-router path: `:petId` becomes `{petId}`. */
const openApiPath = (routerPath: string) => routerPath.replace(/:([A-Za-z]+)/g, "{$1}");

const methodsOf = (pathItem: Json) =>
  Object.keys(pathItem)
    .filter((k) => HTTP_METHODS.includes(k))
    .sort();

describe("OpenAPI document", () => {
  let doc: Json;
  beforeAll(async () => {
    doc = await servedDocument();
  });

  it("is a valid OpenAPI 3.1 document", async () => {
    expect(doc.openapi).toBe("3.1.0");
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it("would be rejected by the validator if it were broken", async () => {
    const broken = structuredClone(doc);
    delete broken.paths["/pets"].get.responses["200"].description;
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow();
  });

  it("lists exactly the paths the router serves, /openapi.json among them", () => {
    expect(Object.keys(doc.paths).sort()).toEqual(ROUTES.map((r) => openApiPath(r.path)).sort());
    expect(Object.keys(doc.paths)).toContain("/openapi.json");
  });

  it("gives each path exactly the methods its route serves", () => {
    for (const route of ROUTES) {
      expect(methodsOf(doc.paths[openApiPath(route.path)]), route.path).toEqual(
        Object.keys(route.methods)
          .map((m) => m.toLowerCase())
          .sort(),
      );
    }
  });

  it("names the server by the base path the API is mounted at", async () => {
    expect(doc.servers).toEqual([{ url: "/v1" }]);
    expect((await servedDocument("/api/store")).servers).toEqual([{ url: "/api/store" }]);
  });

  it("requires the bearer key everywhere except on the document itself", () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.security).toEqual([{ bearer: [] }]);
    expect(doc.paths["/openapi.json"].get.security).toEqual([]);
  });

  it("names on each operation the scope its route needs of the key", () => {
    for (const route of ROUTES.filter((r) => !r.public)) {
      for (const method of Object.keys(route.methods))
        expect(doc.paths[openApiPath(route.path)][method.toLowerCase()].security).toEqual([
          { bearer: [route.scopes?.[method as "GET" | "POST"]] },
        ]);
    }
  });

  it("marks getPet deprecated and documents its deprecation headers", () => {
    const getPet = doc.paths["/pets/{petId}"].get;
    expect(getPet.deprecated).toBe(true);
    for (const status of ["200", "404", "410"])
      expect(Object.keys(getPet.responses[status].headers)).toEqual(
        expect.arrayContaining(["Deprecation", "Sunset", "Link"]),
      );
  });

  it("describes NewPet from NewPetSchema: strict, name 1..100 characters, categoryId 1..MAX_ID, status from the enum", () => {
    const newPet = doc.components.schemas.NewPet;
    expect(Object.keys(newPet.properties).sort()).toEqual(Object.keys(NewPetSchema.entries).sort());
    expect(newPet.required.sort()).toEqual(["categoryId", "name"]);
    expect(newPet.additionalProperties).toBe(false);
    expect(newPet.properties.name).toMatchObject({ type: "string", minLength: 1, maxLength: 100 });
    expect(newPet.properties.categoryId).toEqual({ type: "integer", minimum: 1, maximum: MAX_ID });
    expect(newPet.properties.status.enum).toEqual([...PET_STATUSES]);
    expect(doc.paths["/pets"].post.requestBody).toEqual({
      required: true,
      content: { "application/json": { schema: { $ref: "#/components/schemas/NewPet" } } },
    });
  });

  it("describes Pet and Order from their schemas", () => {
    const pet = doc.components.schemas.Pet;
    expect(Object.keys(pet.properties).sort()).toEqual(Object.keys(PetSchema.entries).sort());
    expect(pet.required.sort()).toEqual(["categoryId", "id", "name"]);
    expect(pet.properties.id).toEqual({ type: "integer", minimum: 1, maximum: MAX_ID });
    const order = doc.components.schemas.Order;
    expect(Object.keys(order.properties).sort()).toEqual(Object.keys(OrderSchema.entries).sort());
    expect(order.required.sort()).toEqual(["complete", "id", "petId", "quantity", "status"]);
    expect(order.properties.status.enum).toEqual([...ORDER_STATUSES]);
    expect(doc.components.schemas.Pets).toEqual({ type: "array", items: { $ref: "#/components/schemas/Pet" } });
    expect(doc.components.schemas.Orders).toEqual({ type: "array", items: { $ref: "#/components/schemas/Order" } });
  });

  it("describes Error from ErrorBodySchema: code, message and status required, details optional", () => {
    const error = doc.components.schemas.Error;
    expect(Object.keys(error.properties).sort()).toEqual(Object.keys(ErrorBodySchema.entries).sort());
    expect(error.required.sort()).toEqual(["code", "message", "status"]);
    expect(error.properties.status.type).toBe("integer");
    expect(error.properties.details.items).toMatchObject({ type: "object", required: ["path", "message"] });
  });

  it("documents the paging parameters with the limits the handlers enforce", () => {
    for (const path of ["/pets", "/store/orders"]) {
      const parameters: Json[] = doc.paths[path].get.parameters;
      expect(parameters.map((p) => `${p.in}:${p.name}`).sort(), path).toEqual([
        "query:cursor",
        "query:limit",
        "query:status",
      ]);
      expect(parameters.find((p) => p.name === "limit")!.schema).toEqual({
        type: "integer",
        minimum: 1,
        maximum: 100,
        default: 20,
      });
    }
    expect(doc.paths["/pets/{petId}"].get.parameters).toEqual([
      { name: "petId", in: "path", required: true, schema: { type: "integer", minimum: 1, maximum: MAX_ID } },
    ]);
  });

  it("documents the rate-limit headers on every response and Retry-After on every 429", () => {
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const method of methodsOf(item)) {
        for (const [status, response] of Object.entries<Json>(item[method].responses)) {
          expect(Object.keys(response.headers ?? {}), `${method} ${path} ${status}`).toEqual(
            expect.arrayContaining(["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-Request-Id"]),
          );
          if (status === "429") expect(Object.keys(response.headers), `${method} ${path}`).toContain("Retry-After");
        }
      }
    }
  });
});

/** One way an operation answers, driven through the real pipeline. */
interface Scenario {
  status: number;
  /** Builds the request; `key` is a valid API key. */
  request: (key: string) => Request;
  /** Changes to the adapters or options, e.g. a failing store. */
  options?: (adapters: PetstoreOptions) => Partial<PetstoreOptions>;
  /** Requests sent first, e.g. to use up a limit. */
  before?: (key: string) => Request[];
  /** What the key may do, when not everything: its scopes and ranges. */
  key?: Pick<IssueApiKeyInput, "scopes" | "allowFrom">;
}

/** A key outside whose ranges the scenarios' client (192.0.2.1) is: every operation answers it 403. */
const elsewhere = { status: 403, key: { allowFrom: ["203.0.113.0/24"] } };

const url = (path: string) => `http://localhost/v1${path}`;
const get = (path: string, key?: string) =>
  new Request(url(path), key ? { headers: { Authorization: `Bearer ${key}` } } : {});
const post = (key: string | undefined, body: string, headers: Record<string, string> = {}) =>
  new Request(url("/pets"), {
    method: "POST",
    body,
    headers: { "Content-Type": "application/json", ...(key ? { Authorization: `Bearer ${key}` } : {}), ...headers },
  });
const validPet = JSON.stringify({ name: "Rex", categoryId: 1 });

/** A store whose every method fails with `error`. */
const failingStore = (error: () => Error): PetStore => ({
  listPets: async () => Promise.reject(error()),
  getPet: async () => Promise.reject(error()),
  createPet: async () => Promise.reject(error()),
  createClaimedPet: async () => Promise.reject(error()),
  listOrders: async () => Promise.reject(error()),
  createOrder: async () => Promise.reject(error()),
});
/** One request a minute, so the second one is refused. */
const overLimit = { status: 429, options: () => ({ plans: { free: { perMinute: 1, perDay: 10 } } }) };
/**
 * What every operation behind a key answers alike, for its request `send` (with no key, without
 * credentials): 401 without a key, 429 for a second request in a minute of one, 500 and 503
 * when the store fails.
 */
const likeEveryKeyedOperation = (send: (key?: string) => Request): Scenario[] => [
  { status: 401, request: () => send() },
  { ...overLimit, before: (key) => [send(key)], request: send },
  { status: 500, options: () => ({ store: failingStore(() => new Error("disk on fire")) }), request: send },
  { status: 503, options: () => ({ store: failingStore(() => new StorageUnavailableError()) }), request: send },
];
const stillRunning: Pick<IdempotencyStore, "claim"> = { claim: async () => ({ state: "in_progress" }) };

/** Every status each operation can answer, each with a request that produces it. */
const OPERATIONS: Record<string, { path: string; method: string; scenarios: Scenario[] }> = {
  listPets: {
    path: "/pets",
    method: "get",
    scenarios: [
      { status: 200, request: (key) => get("/pets", key) },
      { status: 400, request: (key) => get("/pets?limit=0", key) },
      { status: 403, key: { scopes: ["pets:write"] }, request: (key) => get("/pets", key) },
      ...likeEveryKeyedOperation((key) => get("/pets", key)),
    ],
  },
  createPet: {
    path: "/pets",
    method: "post",
    scenarios: [
      { status: 201, request: (key) => post(key, validPet) },
      { status: 400, request: (key) => post(key, JSON.stringify({ name: "Rex" })) },
      { status: 403, key: { scopes: ["pets:read"] }, request: (key) => post(key, validPet) },
      {
        status: 409,
        options: ({ idempotency }) => ({
          idempotency: {
            ...stillRunning,
            release: (claim) => idempotency.release(claim),
            complete: (claim) => idempotency.complete(claim),
          },
        }),
        request: (key) => post(key, validPet, { "Idempotency-Key": "k1" }),
      },
      {
        status: 408,
        options: () => ({ bodyTimeoutMs: 20 }),
        // A body whose first bytes came and the rest never does.
        request: (key) =>
          new Request(url("/pets"), {
            method: "POST",
            body: new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode('{"na')) }),
            duplex: "half",
            headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
          } as RequestInit),
      },
      { status: 413, request: (key) => post(key, JSON.stringify({ name: "x".repeat(MAX_BODY_BYTES), categoryId: 1 })) },
      { status: 415, request: (key) => post(key, validPet, { "Content-Type": "text/plain" }) },
      {
        status: 422,
        before: (key) => [post(key, validPet, { "Idempotency-Key": "k1" })],
        request: (key) => post(key, JSON.stringify({ name: "Tom", categoryId: 1 }), { "Idempotency-Key": "k1" }),
      },
      ...likeEveryKeyedOperation((key) => post(key, validPet)),
    ],
  },
  getPet: {
    path: "/pets/{petId}",
    method: "get",
    scenarios: [
      { status: 200, before: (key) => [post(key, validPet)], request: (key) => get("/pets/1", key) },
      { status: 400, request: (key) => get("/pets/abc", key) },
      { ...elsewhere, request: (key) => get("/pets/1", key) },
      { status: 404, request: (key) => get("/pets/1", key) },
      // The sunset passes by the limiter's clock (its store's, shared by a fleet).
      {
        status: 410,
        options: () => ({ limiter: memoryAdapters({ clock: () => GET_PET_SUNSET_AT }).limiter }),
        request: (key) => get("/pets/1", key),
      },
      ...likeEveryKeyedOperation((key) => get("/pets/1", key)),
    ],
  },
  listOrders: {
    path: "/store/orders",
    method: "get",
    scenarios: [
      { status: 200, request: (key) => get("/store/orders", key) },
      { status: 400, request: (key) => get("/store/orders?status=lost", key) },
      { status: 403, key: { scopes: ["pets:read"] }, request: (key) => get("/store/orders", key) },
      ...likeEveryKeyedOperation((key) => get("/store/orders", key)),
    ],
  },
  getOpenApi: {
    path: "/openapi.json",
    method: "get",
    scenarios: [
      { status: 200, request: () => get("/openapi.json") },
      // A public document: served to a key from outside its ranges as to anyone.
      { status: 200, key: elsewhere.key, request: (key) => get("/openapi.json", key) },
      { ...overLimit, before: () => [get("/openapi.json")], request: () => get("/openapi.json") },
      {
        status: 500,
        options: () => ({ limiter: { hit: async () => Promise.reject(new Error("limiter broke")) } }),
        request: () => get("/openapi.json"),
      },
      {
        status: 503,
        options: () => ({ limiter: { hit: async () => Promise.reject(new StorageUnavailableError()) } }),
        request: () => get("/openapi.json"),
      },
    ],
  },
};

/** Sends a scenario's requests through a fresh petstore; answers the last response's status. */
async function statusOf(scenario: Scenario): Promise<number> {
  const adapters: PetstoreOptions = { ...memoryAdapters({ clock: () => NOW }), clock: () => NOW, onError: () => {} };
  // Keys are made first, on working storage, whatever the scenario does to the adapters later.
  const { key } = await issueApiKey(adapters.keys, { plan: "free", ...scenario.key });
  const petstore = createPetstore({ ...adapters, ...scenario.options?.(adapters) });
  for (const request of scenario.before?.(key) ?? []) await petstore.fetch(request, { clientAddress: "192.0.2.1" });
  const response = await petstore.fetch(scenario.request(key), { clientAddress: "192.0.2.1" });
  return response.status;
}

describe("OpenAPI document and served statuses", () => {
  let doc: Json;
  beforeAll(async () => {
    doc = await servedDocument();
  });

  for (const [operationId, { path, method, scenarios }] of Object.entries(OPERATIONS)) {
    it(`documents exactly the statuses ${operationId} answers`, async () => {
      const operation = doc.paths[path][method];
      expect(operation.operationId).toBe(operationId);
      const served: number[] = [];
      for (const scenario of scenarios) {
        const status = await statusOf(scenario);
        expect(status, `${operationId} scenario meant to answer ${scenario.status}`).toBe(scenario.status);
        served.push(status);
      }
      expect(Object.keys(operation.responses).map(Number).sort()).toEqual([...new Set(served)].sort());
    });
  }
});
