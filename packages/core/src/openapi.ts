import { type Json, query, ref, schema } from "./_openapi-parts.js";
import { ERROR_STATUS } from "./errors.js";
import { MAX_BODY_BYTES } from "./_json-body.js";
import type { Scope } from "./ports.js";
import {
  ErrorBodySchema,
  IdSchema,
  LimitSchema,
  NewPetSchema,
  OrderSchema,
  OrderStatusSchema,
  PetSchema,
  PetStatusSchema,
} from "./schemas.js";

/**
 * The OpenAPI 3.1 document of exactly what `createPetstore` serves, generated from the same
 * valibot schemas the handlers validate with.
 */

const header = (description: string, type: "integer" | "string" = "string") => ({ description, schema: { type } });

const RATE_LIMIT_HEADERS = {
  "X-RateLimit-Limit": { $ref: "#/components/headers/X-RateLimit-Limit" },
  "X-RateLimit-Remaining": { $ref: "#/components/headers/X-RateLimit-Remaining" },
  "X-RateLimit-Reset": { $ref: "#/components/headers/X-RateLimit-Reset" },
  RateLimit: { $ref: "#/components/headers/RateLimit" },
  "RateLimit-Policy": { $ref: "#/components/headers/RateLimit-Policy" },
  "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" },
};

const DEPRECATION_HEADERS = {
  Deprecation: header("RFC 9745: when this operation was deprecated (`@<unix seconds>`)"),
  Sunset: header("RFC 8594: when this operation stops answering (HTTP date)"),
  Link: header('`<{base}/pets>; rel="successor-version"`: the replacement'),
};

const ERROR_TEXT: Record<number, string> = {
  400: "Invalid parameter or body (`invalid_parameter`, `invalid_body` with `details`)",
  403: "The API key may not do this (`insufficient_scope`: it lacks the operation's scope, named in `WWW-Authenticate`) or not from this address (`address_not_allowed`: outside the key's allowlist)",
  401: "No valid API key (`unauthorized`); the message says why: none sent, not valid, `The API key has been revoked`, `The API key has expired` (for as long as the key exists), or a secret replaced by a roll whose overlap ended",
  404: "Not found (`not_found`)",
  405: "The path does not take this method (`method_not_allowed`); `Allow` lists those it takes",
  409: "The first request with this Idempotency-Key is still running (`idempotency_key_in_use`)",
  408: "The request body did not arrive within the body deadline (`request_timeout`); the connection is closed",
  410: "Removed on its sunset date (`gone`)",
  413: `Body larger than ${MAX_BODY_BYTES} bytes (\`payload_too_large\`)`,
  415: "Content-Type is not JSON, or names a charset other than utf-8 (`unsupported_media_type`)",
  422: "Idempotency-Key already used with a different body (`idempotency_key_reused`)",
  429: "Over a rate limit (`rate_limited`) or temporarily banned (`temporarily_banned`)",
  500: "Unexpected failure (`internal_error`)",
  503: "Storage busy or unreachable (`service_unavailable`); retry after `Retry-After`",
};

function errorResponse(status: number, extraHeaders: Json = {}): Json {
  const headers: Json = { ...RATE_LIMIT_HEADERS, ...extraHeaders };
  if (status === 429 || status === 503) headers["Retry-After"] = { $ref: "#/components/headers/Retry-After" };
  if (status === 401)
    headers["WWW-Authenticate"] = header('`Bearer realm="petstore"`, with `error="invalid_token"` when a key was sent');
  if (status === 403)
    headers["WWW-Authenticate"] = header(
      'On `insufficient_scope` (RFC 6750 section 3.1): `Bearer error="insufficient_scope", scope="<the scope needed>"`',
    );
  return { description: ERROR_TEXT[status], headers, content: { "application/json": { schema: ref("Error") } } };
}

/** `authenticated: false` for an operation served without a key, which never answers 401 nor 403. */
function responses(
  success: Record<string, Json>,
  errors: number[],
  extraHeaders: Json = {},
  authenticated = true,
): Json {
  const all: Json = { ...success };
  for (const status of [...errors, ...(authenticated ? [401, 403] : []), 429, 500, 503])
    all[String(status)] = errorResponse(status, extraHeaders);
  return all;
}

/** The operation's requirement: an API key with `scope` (OpenAPI 3.1 lets a bearer requirement list the roles it needs). */
const needs = (scope: Scope) => [{ bearer: [scope] }];

const pageParameters = (statusSchema: string) => [
  query("limit", { ...schema(LimitSchema), default: 20 }, "Page size"),
  query("status", ref(statusSchema), "Only rows with this status"),
  query("cursor", { type: "string" }, "Opaque cursor from the previous page's `Link` header"),
];

const pageHeaders = {
  ...RATE_LIMIT_HEADERS,
  Link: header('RFC 8288 `<...?cursor=...>; rel="next"` when more rows exist; absent on the last page'),
};

/** Every error code with its status, for the document's description. */
const errorCatalogue = Object.entries(ERROR_STATUS)
  .map(([code, status]) => `- \`${code}\`: ${status}`)
  .join("\n");

/** The OpenAPI 3.1 document for an API mounted at `basePath`. */
export function openApiDocument({ basePath }: { basePath: string }): Json {
  return {
    openapi: "3.1.0",
    info: {
      title: "Pet Store",
      version: "1.0.0",
      description: `Pet store inventory API. Every response carries the rate-limit headers. A method a path does not take is answered \`405 method_not_allowed\` with \`Allow\` listing those it takes (\`components.responses.MethodNotAllowed\`); \`HEAD\` is taken wherever \`GET\` is. Unknown query parameters are ignored.\n\nError codes:\n${errorCatalogue}`,
    },
    servers: [{ url: basePath || "/" }],
    security: [{ bearer: [] }],
    paths: {
      "/pets": {
        get: {
          operationId: "listPets",
          security: needs("pets:read"),
          summary: "List animals, optionally filtered by status",
          parameters: pageParameters("PetStatus"),
          responses: responses(
            {
              "200": {
                description: "A page of pets, ordered by id",
                headers: pageHeaders,
                content: { "application/json": { schema: ref("Pets") } },
              },
            },
            [400],
          ),
        },
        post: {
          operationId: "createPet",
          security: needs("pets:write"),
          summary: "Add an animal",
          parameters: [
            {
              name: "Idempotency-Key",
              in: "header",
              required: false,
              description:
                "1 to 255 printable ASCII characters other than the comma, sent once; a retry with the same key and body replays the first answer (kept 24 h)",
              schema: { type: "string", minLength: 1, maxLength: 255 },
            },
          ],
          requestBody: { required: true, content: { "application/json": { schema: ref("NewPet") } } },
          responses: responses(
            {
              "201": {
                description: "Created (or replayed, with `Idempotent-Replayed: true`)",
                headers: {
                  ...RATE_LIMIT_HEADERS,
                  Location: header("Path of the new pet"),
                  "Idempotent-Replayed": header("`true` when this is the stored answer of an earlier request"),
                },
                content: { "application/json": { schema: ref("Pet") } },
              },
            },
            [400, 408, 409, 413, 415, 422],
          ),
        },
      },
      "/pets/{petId}": {
        get: {
          operationId: "getPet",
          security: needs("pets:read"),
          summary: "Get an animal (deprecated: removed on 5 December 2030; use GET /pets)",
          deprecated: true,
          parameters: [{ name: "petId", in: "path", required: true, schema: schema(IdSchema) }],
          responses: responses(
            {
              "200": {
                description: "The pet",
                headers: { ...RATE_LIMIT_HEADERS, ...DEPRECATION_HEADERS },
                content: { "application/json": { schema: ref("Pet") } },
              },
            },
            [400, 404, 410],
            DEPRECATION_HEADERS,
          ),
        },
      },
      "/store/orders": {
        get: {
          operationId: "listOrders",
          security: needs("orders:read"),
          summary: "List store orders, optionally filtered by status",
          parameters: pageParameters("OrderStatus"),
          responses: responses(
            {
              "200": {
                description: "A page of orders, ordered by id",
                headers: pageHeaders,
                content: { "application/json": { schema: ref("Orders") } },
              },
            },
            [400],
          ),
        },
      },
      "/openapi.json": {
        get: {
          operationId: "getOpenApi",
          summary: "This document",
          security: [],
          responses: responses(
            {
              "200": {
                description: "The OpenAPI document",
                headers: RATE_LIMIT_HEADERS,
                content: { "application/json": { schema: { type: "object" } } },
              },
            },
            [],
            {},
            false,
          ),
        },
      },
    },
    components: {
      responses: { MethodNotAllowed: errorResponse(405, { Allow: header("The methods the path takes") }) },
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description:
            "An API key: `psk_` + 38 base62 characters. Each operation names the scope it needs (`pets:read`, `pets:write`, `orders:read`); a key has every scope unless it was given fewer, and may be limited to CIDR ranges of client addresses",
        },
      },
      schemas: {
        PetStatus: schema(PetStatusSchema),
        NewPet: schema(NewPetSchema),
        Pet: schema(PetSchema),
        Pets: { type: "array", items: ref("Pet") },
        OrderStatus: schema(OrderStatusSchema),
        Order: schema(OrderSchema),
        Orders: { type: "array", items: ref("Order") },
        Error: schema(ErrorBodySchema),
      },
      headers: {
        "X-RateLimit-Limit": header("Request limit of the binding window", "integer"),
        "X-RateLimit-Remaining": header("Requests left in that window after this one", "integer"),
        "X-RateLimit-Reset": header("Unix time (seconds) at which that window resets", "integer"),
        RateLimit: header('IETF draft: `"<window>";r=<remaining>;t=<seconds to reset>`'),
        "RateLimit-Policy": header('IETF draft: `"minute";q=<limit>;w=60, "day";q=<limit>;w=86400`'),
        "Retry-After": header("Whole seconds to wait before retrying", "integer"),
        "X-Request-Id": header("Echo of the caller's X-Request-Id, or a generated one"),
      },
    },
  };
}
