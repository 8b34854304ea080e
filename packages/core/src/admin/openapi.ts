import { type Json, query, ref, schema } from "../_openapi-parts.js";
import { ErrorBodySchema } from "../schemas.js";
import { PLAN_NAMES } from "../keys/rules.js";
import { KEY_ORDERS } from "./operations.js";
import {
  AccountChangesSchema,
  AccountPageSchema,
  AccountViewSchema,
  AdminTokenViewSchema,
  AdminTokenWithSecretSchema,
  AUDIT_ACTIONS,
  AuditEntrySchema,
  KEY_STATES,
  KeyChangesSchema,
  KeyViewSchema,
  KeyWithSecretSchema,
  NewAccountSchema,
  NewAdminTokenSchema,
  NewKeySchema,
  RollSchema,
} from "./schemas.js";
import { AccountUsageViewSchema, KeyUsageViewSchema, TopKeysViewSchema } from "./usage-view.js";
import { USAGE_STEPS, USAGE_WINDOWS } from "../usage/usage-history.js";

const json = (body: Json) => ({ "application/json": { schema: body } });

const ERRORS: Record<number, string> = {
  400: "Invalid parameter or body (`invalid_parameter`, `invalid_body` with `details`)",
  401: "No admin credential (`An admin credential is required`), or one refused (`The admin token was refused`): `unauthorized`",
  403: "Refused before authentication (`forbidden`): a request another site's page sent, or a host name this listener does not answer",
  404: "No such key, account or admin token (`not_found`); for `/tokens`, an admin API that manages no admin tokens",
  409: "The key was revoked (`key_revoked`), or its last roll's overlap still runs (`roll_in_progress`); a create or roll with the same Idempotency-Key still running (`idempotency_key_in_use`)",
  413: "Body larger than 16 KiB (`payload_too_large`)",
  405: "The path does not take this method (`method_not_allowed`); `Allow` lists those it takes",
  408: "The body did not arrive within the body deadline (`request_timeout`); the connection is closed",
  415: "Content-Type is not JSON, or names a charset other than utf-8 (`unsupported_media_type`)",
  422: "Idempotency-Key already used with a different body (`idempotency_key_reused`)",
  429: "Too many failed credentials from this address (`rate_limited`, `temporarily_banned`)",
  500: "Unexpected failure (`internal_error`)",
  503: "Storage busy or unreachable (`service_unavailable`); retry after `Retry-After`",
};

function responses(success: Record<string, Json>, errors: number[]): Json {
  const all: Json = { ...success };
  for (const status of [...errors, 401, 403, 429, 500, 503])
    all[String(status)] = { description: ERRORS[status], content: json(ref("Error")) };
  return all;
}

/** A 400 whose cases are named: `invalid_parameter`, its `details` naming the parameter. */
const invalidParameter = (cases: string) => ({
  description: `${cases} (\`invalid_parameter\`, \`details\` naming the parameter)`,
  content: json(ref("Error")),
});

const keyId = {
  name: "id",
  in: "path",
  required: true,
  description: "The key's id (`key_...`)",
  schema: { type: "string" },
};
const idempotencyKey = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "A retry with the same key and body is answered as the first attempt was, without the secret (never kept: roll the key if that answer was lost)",
  schema: { type: "string", minLength: 1, maxLength: 255 },
};
const page = [
  query("limit", { type: "integer", minimum: 1, maximum: 100, default: 20 }),
  query("cursor", { type: "string" }, "Opaque cursor from the previous page's `Link` header"),
];
const accountId = { ...keyId, description: "The account's id (`acct_...`)" };
const usageParameters = [
  query(
    "from",
    { type: "string", format: "date-time" },
    "ISO 8601 with its offset; read from the start of its bucket. Default: an hour, a day or 30 days before `to` (by step). Not after `to`, nor older than kept for the step",
  ),
  query("to", { type: "string", format: "date-time" }, "ISO 8601 with its offset; default (and at the latest) now"),
  query("step", { type: "string", enum: [...USAGE_STEPS], default: "hour" }),
];
/** A usage answer (`KeyUsage`, `AccountUsage`): JSON, or CSV when asked. */
const usageResponses = (view: string) =>
  responses(
    {
      200: {
        description:
          "Every bucket of the span, oldest first (`Accept: text/csv`: `at,admitted,rate_limited,banned,unauthorized`, a line per bucket)",
        content: { ...json(ref(view)), "text/csv": { schema: { type: "string" } } },
      },
      400: invalidParameter(
        "`from` after `to`, `from` older than kept for the step (48 hours by minute or hour, 400 days by day), a `step` other than minute, hour or day, or an instant that is not ISO 8601 with its offset",
      ),
    },
    [404],
  );
const linkHeader = {
  Link: { description: 'RFC 8288 `rel="next"`: the next page, when there is one', schema: { type: "string" } },
};
const body = (name: string) => ({ required: true, content: json(ref(name)) });
const replayedHeader = {
  "Idempotent-Replayed": {
    description: "`true` when this answers a retry with an earlier request's Idempotency-Key and body",
    schema: { type: "string", enum: ["true"] },
  },
};
/** The 201 of a create: the new `view` at its `Location`, or the first attempt's on a replay. */
const created = (description: string, location: string, view: string) => ({
  201: {
    description,
    headers: { Location: { description: location, schema: { type: "string" } }, ...replayedHeader },
    content: json(ref(view)),
  },
});

/**
 * The OpenAPI 3.1 document of the admin API `createAdmin` serves under `basePath`, generated
 * from the schemas it validates with.
 */
export function adminOpenApi(basePath: string): Json {
  return {
    openapi: "3.1.0",
    info: {
      title: "Pet Store admin API",
      version: "1.0.0",
      description:
        "The life of the API keys: create, read, update, roll with an overlap, revoke, lift a ban, their usage history, the accounts they belong to, the audit trail, and the admin tokens. Never cached; every change audited. A method a path does not take is answered `405 method_not_allowed` with `Allow` listing those it takes (`components.responses.MethodNotAllowed`); `HEAD` is taken wherever `GET` is. Unknown query parameters are ignored.",
    },
    servers: [{ url: basePath }],
    security: [{ adminToken: [] }],
    paths: {
      "/keys": {
        get: {
          operationId: "listKeys",
          summary: "Keys in the order they were made, with their usage",
          parameters: [
            ...page,
            query("q", { type: "string" }, "Only keys whose id or label holds this (any case)"),
            query("plan", { type: "string", enum: [...PLAN_NAMES] }, "Only keys of this plan"),
            query("account", { type: "string" }, "Only the keys of this account (`acct_...`)"),
            query(
              "state",
              { type: "string", enum: [...KEY_STATES] },
              "Only keys in this state now (a key may be in several: see `states`): `active` neither revoked nor expired (its current secret works unless banned); `rolling` its old secret still working; `banned` by the rate limiter; `expired`; `revoked`",
            ),
            query(
              "sort",
              { type: "string", enum: [...KEY_ORDERS], default: "created" },
              "`created`: as the keys were made; `lastUsed`: the latest used first, never used last; `today`: the most requests admitted this UTC day first (by the usage history, recorded within 10 s). Ties as the keys were made",
            ),
          ],
          responses: responses(
            {
              200: {
                description:
                  "A page of keys (with a filter, a page may hold fewer than `limit` and still have a next one, after 10,000 keys read)",
                headers: linkHeader,
                content: json({ type: "array", items: ref("Key") }),
              },
              400: invalidParameter(
                "A `limit` outside 1-100, a `plan`, `state` or `sort` not among its values, a parameter given twice or empty, or a `cursor` this API did not give",
              ),
            },
            [],
          ),
        },
        post: {
          operationId: "createKey",
          summary: "A new key, shown once",
          parameters: [idempotencyKey],
          requestBody: body("NewKey"),
          responses: responses(
            created("The key, and its secret (null on a replay)", "The key's path", "KeyWithSecret"),
            [400, 408, 413, 415, 422],
          ),
        },
      },
      "/keys/{id}": {
        get: {
          operationId: "getKey",
          parameters: [keyId],
          responses: responses({ 200: { description: "The key", content: json(ref("Key")) } }, [404]),
        },
        patch: {
          operationId: "updateKey",
          summary: "Plan, limits, label, expiry; the secret stays. In force on every server within 5 s",
          parameters: [keyId],
          requestBody: body("KeyChanges"),
          responses: responses(
            { 200: { description: "The key after the change", content: json(ref("Key")) } },
            [400, 404, 408, 409, 413, 415],
          ),
        },
      },
      "/keys/{id}/roll": {
        post: {
          operationId: "rollKey",
          summary:
            "A new secret for the same key and counters; the old one works for the overlap, its answers saying so (Deprecation, Sunset)",
          parameters: [keyId, idempotencyKey],
          requestBody: body("Roll"),
          responses: responses(
            {
              200: {
                description: "The key and its new secret (null on a replay)",
                headers: replayedHeader,
                content: json(ref("KeyWithSecret")),
              },
            },
            [400, 404, 408, 409, 413, 415, 422],
          ),
        },
      },
      "/keys/{id}/revoke": {
        post: {
          operationId: "revokeKey",
          summary: "Refused everywhere within 5 s",
          parameters: [keyId],
          responses: responses({ 200: { description: "The key, revoked", content: json(ref("Key")) } }, [404]),
        },
      },
      "/keys/{id}/unban": {
        post: {
          operationId: "unbanKey",
          summary: "Ends the key's ban now",
          parameters: [keyId],
          responses: responses(
            {
              200: {
                description: "The key, and whether it was banned",
                content: json({
                  ...schema(KeyViewSchema),
                  properties: { ...(schema(KeyViewSchema).properties as Json), unbanned: { type: "boolean" } },
                }),
              },
            },
            [404],
          ),
        },
      },
      "/keys/{id}/usage": {
        get: {
          operationId: "getKeyUsage",
          summary:
            "The key's requests by outcome (admitted, rate limited, banned, unauthorized), bucket by bucket: by minute or hour over the last 48 hours, by UTC day over the last 400 days. Written by the servers at least every 10 s",
          parameters: [keyId, ...usageParameters],
          responses: usageResponses("KeyUsage"),
        },
      },
      "/accounts": {
        get: {
          operationId: "listAccounts",
          summary: "Accounts in the order they were made, each with how many keys it has",
          parameters: [...page, query("plan", { type: "string", enum: [...PLAN_NAMES] }, "Only accounts of this plan")],
          responses: responses(
            {
              200: {
                description: "A page of accounts; `nextCursor` (and the `Link` header) ask for the next one",
                headers: linkHeader,
                content: json(ref("AccountPage")),
              },
              400: invalidParameter(
                "A `limit` outside 1-100, a `plan` not among its values, a parameter given twice or empty, or a `cursor` this API did not give",
              ),
            },
            [],
          ),
        },
        post: {
          operationId: "createAccount",
          summary:
            "A new account: its keys' requests count together against its plan's limits (an enterprise account needs both of its own); audited",
          parameters: [
            {
              ...idempotencyKey,
              description: "A retry with the same key and body is answered as the first attempt was: the same account",
            },
          ],
          requestBody: body("NewAccount"),
          responses: responses(created("The account", "The account's path", "Account"), [400, 408, 409, 413, 415, 422]),
        },
      },
      "/accounts/{id}": {
        get: {
          operationId: "getAccount",
          parameters: [accountId],
          responses: responses({ 200: { description: "The account", content: json(ref("Account")) } }, [404]),
        },
        patch: {
          operationId: "updateAccount",
          summary:
            "Name, plan, limits (`null`: the plan's again), allowlist (`null`: any address again). Its keys that had its plan and limits take the new ones (a key with caps of its own keeps them); in force on every server within 5 s; audited",
          parameters: [accountId],
          requestBody: body("AccountChanges"),
          responses: responses(
            { 200: { description: "The account after the change", content: json(ref("Account")) } },
            [400, 404, 408, 413, 415],
          ),
        },
      },
      "/accounts/{id}/usage": {
        get: {
          operationId: "getAccountUsage",
          summary:
            "The requests of all the account's keys (revoked ones too) by outcome, summed bucket by bucket, as a key's usage is read",
          parameters: [accountId, ...usageParameters],
          responses: usageResponses("AccountUsage"),
        },
      },
      "/usage/top": {
        get: {
          operationId: "getTopKeys",
          summary:
            "The 20 keys with the most requests (every outcome) or refusals (all but admitted) over the last hour or day (by minute, the current one included) or the last 30 UTC days (today included)",
          parameters: [
            query("window", { type: "string", enum: [...USAGE_WINDOWS], default: "24h" }),
            query("by", { type: "string", enum: ["requests", "refusals"], default: "requests" }),
          ],
          responses: responses(
            {
              200: { description: "The keys, most first (a tie by id)", content: json(ref("TopKeys")) },
              400: invalidParameter("A `window` other than 1h, 24h or 30d, or a `by` other than requests or refusals"),
            },
            [],
          ),
        },
      },
      "/audit": {
        get: {
          operationId: "listAudit",
          summary: "The audit trail, newest first",
          parameters: [
            ...page,
            query(
              "keyId",
              { type: "string" },
              "Only this key's changes (or an account's: `acct_...`, or an admin token's: `tok_...`)",
            ),
            query("action", { type: "string", enum: [...AUDIT_ACTIONS] }, "Only changes of this action"),
            query(
              "actor",
              { type: "string" },
              "Only changes made by this actor, exactly as the trail says it (`admin:tok_...`, `cli:USER@HOST`)",
            ),
          ],
          responses: responses(
            {
              200: {
                description: "A page of changes",
                headers: linkHeader,
                content: json({ type: "array", items: ref("AuditEntry") }),
              },
              400: invalidParameter(
                "A `limit` outside 1-100, an `action` not among its values, a parameter given twice or empty, or a `cursor` this API did not give",
              ),
            },
            [],
          ),
        },
      },
      "/tokens": {
        get: {
          operationId: "listAdminTokens",
          summary: "Every admin token, revoked ones too, in the order they were made (never a token's secret)",
          responses: responses(
            {
              200: { description: "The admin tokens", content: json({ type: "array", items: ref("AdminToken") }) },
            },
            [404],
          ),
        },
        post: {
          operationId: "createAdminToken",
          summary: "A new admin token, shown once; its creation audited under its id",
          parameters: [
            {
              ...idempotencyKey,
              description:
                "A retry with the same key and body is answered as the first attempt was, without the token (never kept: revoke it and make another if that answer was lost)",
            },
          ],
          requestBody: body("NewAdminToken"),
          responses: responses(
            {
              201: {
                description: "The token's record, and the token (null on a replay)",
                content: json(ref("AdminTokenWithSecret")),
              },
            },
            [400, 404, 409, 413, 415, 422],
          ),
        },
      },
      "/tokens/{id}/revoke": {
        post: {
          operationId: "revokeAdminToken",
          summary: "Refused by the admin API from now on (revoking again: the token as it is); audited",
          parameters: [{ ...keyId, description: "The admin token's id (`tok_...`)" }],
          responses: responses({ 200: { description: "The token, revoked", content: json(ref("AdminToken")) } }, [404]),
        },
      },
      "/openapi.json": {
        get: {
          operationId: "getAdminOpenApi",
          security: [],
          responses: { 200: { description: "This document", content: json({ type: "object" }) } },
        },
      },
    },
    components: {
      responses: {
        MethodNotAllowed: {
          description: ERRORS[405],
          headers: { Allow: { description: "The methods the path takes", schema: { type: "string" } } },
          content: json(ref("Error")),
        },
      },
      securitySchemes: {
        adminToken: {
          type: "http",
          scheme: "bearer",
          description: "An admin token (`petstore admin-tokens create`), never an API key",
        },
      },
      schemas: {
        Key: schema(KeyViewSchema),
        KeyWithSecret: schema(KeyWithSecretSchema),
        NewKey: schema(NewKeySchema),
        KeyChanges: schema(KeyChangesSchema),
        Roll: schema(RollSchema),
        AuditEntry: schema(AuditEntrySchema),
        KeyUsage: schema(KeyUsageViewSchema),
        TopKeys: schema(TopKeysViewSchema),
        Account: schema(AccountViewSchema),
        AccountPage: schema(AccountPageSchema),
        NewAccount: schema(NewAccountSchema),
        AccountChanges: schema(AccountChangesSchema),
        AccountUsage: schema(AccountUsageViewSchema),
        AdminToken: schema(AdminTokenViewSchema),
        AdminTokenWithSecret: schema(AdminTokenWithSecretSchema),
        NewAdminToken: schema(NewAdminTokenSchema),
        Error: schema(ErrorBodySchema),
      },
    },
  };
}
