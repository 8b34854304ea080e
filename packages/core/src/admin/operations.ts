import * as v from "valibot";
import { IDEMPOTENCY_KEY, idempotencyRefusal } from "../_idempotency-key.js";
import { readJsonBody } from "../_json-body.js";
import { ApiError } from "../errors.js";
import type { IdempotencyRefusal, KeyLife } from "../keys/key-life.js";
import { KeyRuleError, PLAN_NAMES } from "../keys/rules.js";
import type { PlanLimits } from "../plans.js";
import type {
  Actor,
  AdminTokens,
  ApiKeyRecord,
  ApiKeys,
  IdempotencyStore,
  KeyChange,
  KeyListQuery,
  KeyOrder,
  KeyRecordState,
  PlanName,
  RateLimiter,
} from "../ports.js";
import type { ErrorDetail } from "../schemas.js";
import { iso, keyView } from "./key-view.js";
import { AUDIT_ACTIONS, KEY_STATES, KeyChangesSchema, type KeyView, NewKeySchema, RollSchema } from "./schemas.js";

/**
 * What an operation needs: the key life it calls, the ports it reads (admin tokens too, when kept), the plans' limits, the
 * admin's clock (a roll's overlap still running, when the limiter cannot say), the body
 * deadline, and whether Idempotency-Keys are kept.
 */
export interface AdminDeps {
  life: KeyLife;
  keys: ApiKeys;
  /** The admin tokens the API manages, when the host keeps them (the binary's listener does). */
  tokens?: AdminTokens;
  idempotency?: IdempotencyStore;
  limiter: RateLimiter;
  plans: Record<PlanName, PlanLimits>;
  clock(): number;
  bodyTimeoutMs: number;
  idempotent: boolean;
  /** Told the id of every key a change of its account changed (see `AdminOptions.onKeyChange`). */
  onKeyChange?: (keyId: string) => void;
}

/** An operation's answer: its status, body and extra headers (`Location`, `Link`...). */
export interface Outcome {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** What an operation gets of its request. */
export interface Call {
  request: Request;
  url: URL;
  actor: Actor;
  /** The `{id}` of `/keys/{id}...`. */
  id: string;
  basePath: string;
}

const MAX_PAGE = 100;
/** Keys a search reads at most per request; past them the page ends early, with its `next` link. */
const SEARCH_SCAN = 10_000;

/** A cursor as the API hands it out: opaque (base64url of what it points after). */
export const cursorOf = (value: string) => btoa(value).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
export function fromCursor(cursor: string): string {
  try {
    return atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    throw new ApiError("invalid_parameter", "Query parameter 'cursor' is not a cursor this API gave", [
      { path: "cursor", message: "must be a cursor from a previous page's Link header" },
    ]);
  }
}

/** A query parameter given at most once, or undefined; `invalid_parameter` when repeated or empty. */
export function queryParameter(url: URL, name: string): string | undefined {
  const values = url.searchParams.getAll(name);
  if (values.length === 0) return undefined;
  if (values.length > 1 || values[0] === "")
    throw new ApiError("invalid_parameter", `Query parameter '${name}' must be given once, not empty`, [
      { path: name, message: "must be given once, not empty" },
    ]);
  return values[0];
}

/** A query parameter that must be one of `allowed`, or undefined when not given. */
export function choice<T extends string>(url: URL, name: string, allowed: readonly T[]): T | undefined {
  const value = queryParameter(url, name);
  if (value === undefined || (allowed as readonly string[]).includes(value)) return value as T | undefined;
  const message = `must be one of ${allowed.join(", ")}`;
  throw new ApiError("invalid_parameter", `Query parameter '${name}' ${message}`, [{ path: name, message }]);
}

/** The orders `GET /keys?sort=` takes (see `KeyOrder`). */
export const KEY_ORDERS = ["created", "lastUsed", "today"] as const satisfies readonly KeyOrder[];

/** `limit`: an integer from 1 to 100, default 20. */
export function pageLimit(url: URL): number {
  const text = queryParameter(url, "limit") ?? "20";
  const limit = /^\d{1,3}$/.test(text) ? Number(text) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_PAGE))
    throw new ApiError("invalid_parameter", `Query parameter 'limit' must be an integer from 1 to ${MAX_PAGE}`, [
      { path: "limit", message: `must be an integer from 1 to ${MAX_PAGE}` },
    ]);
  return limit;
}

/** The body as `schema` reads it, or `invalid_body` listing every problem. */
export async function readBody<S extends v.GenericSchema>(
  call: Call,
  deps: AdminDeps,
  schema: S,
  what: string,
): Promise<v.InferOutput<S>> {
  const raw = await readJsonBody(call.request, deps.bodyTimeoutMs);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new ApiError("invalid_body", `The request body is not a valid ${what}`, [
      { path: "", message: "must be a JSON object" },
    ]);
  const result = v.safeParse(schema, raw);
  if (result.success) return result.output;
  const details: ErrorDetail[] = result.issues.map((issue) => {
    const path = v.getDotPath(issue) ?? "";
    if (issue.type === "strict_object" && issue.input === undefined) return { path, message: "is required" };
    if (issue.type === "strict_object") return { path, message: `is not a field of a ${what}` };
    return { path, message: issue.message };
  });
  throw new ApiError("invalid_body", `The request body is not a valid ${what}`, details);
}

/** The request's Idempotency-Key, or undefined without one. */
export function idempotencyKeyOf(call: Call, deps: AdminDeps): string | undefined {
  const key = call.request.headers.get("idempotency-key");
  if (key === null) return undefined;
  const message = !IDEMPOTENCY_KEY.test(key)
    ? "must be 1 to 255 printable ASCII characters other than the comma, sent once"
    : !deps.idempotent
      ? "is not kept by this admin API (createAdmin was given no idempotency store)"
      : undefined;
  if (message !== undefined)
    throw new ApiError("invalid_parameter", `Header 'Idempotency-Key' ${message}`, [
      { path: "Idempotency-Key", message },
    ]);
  return key;
}

/** The key life's answer, a rule it refused said as the body's problems. */
export async function ruled<T>(what: string, change: () => Promise<T>): Promise<T> {
  try {
    return await change();
  } catch (error) {
    if (error instanceof KeyRuleError)
      throw new ApiError("invalid_body", `The request body is not a valid ${what}`, error.details);
    throw error;
  }
}

/** The 409 or 422 of an Idempotency-Key that cannot be answered now. */
export function refusedKey(refusal: IdempotencyRefusal): never {
  throw idempotencyRefusal(refusal.state === "idempotency_key_in_use" ? "in_progress" : "mismatch");
}

/** The key as the admin API shows it, with its usage from the limiter when it can say. */
const viewOf = (record: ApiKeyRecord, deps: AdminDeps) =>
  keyView(record, { limiter: deps.limiter, plans: deps.plans, clock: deps.clock });

/** The record a change found, or the 404/409 that says why there is none to change. */
function changed(id: string, change: KeyChange): ApiKeyRecord {
  if (change.state === "changed") return change.record;
  if (change.state === "missing") throw new ApiError("not_found", `No API key has the id ${id}`);
  if (change.state === "revoked")
    throw new ApiError(
      "key_revoked",
      `The API key ${id} was revoked at ${iso(change.record.revokedAt)}: it takes no change`,
    );
  throw new ApiError(
    "roll_in_progress",
    `The API key ${id} was rolled at ${iso(change.record.rolled!.at)}; its old secret works until ${iso(change.record.rolled!.until)}: roll it again after that`,
  );
}

async function found(id: string, deps: AdminDeps): Promise<ApiKeyRecord> {
  const record = await deps.keys.get(id);
  if (!record) throw new ApiError("not_found", `No API key has the id ${id}`);
  return record;
}

/** A replay's answer: the key as it is now, without the secret, which is never kept. */
export const REPLAYED = { "Idempotent-Replayed": "true" };

export const operations = {
  /**
   * `GET /keys`: a page of keys in `sort` order (as they were made, by last use, by today's
   * admitted requests), of one `plan`, `state` and `account`; `q` keeps those whose id or label holds it.
   */
  async listKeys(call: Call, deps: AdminDeps): Promise<Outcome> {
    const limit = pageLimit(call.url);
    const cursor = queryParameter(call.url, "cursor");
    const search = queryParameter(call.url, "q");
    const plan = choice(call.url, "plan", PLAN_NAMES);
    const state = choice(call.url, "state", KEY_STATES);
    const order = choice(call.url, "sort", KEY_ORDERS);
    const accountId = queryParameter(call.url, "account");
    const q = search?.toLowerCase();
    const matches = (record: ApiKeyRecord) =>
      q === undefined || record.id.toLowerCase().includes(q) || (record.label ?? "").toLowerCase().includes(q);
    // A ban is the limiter's: the store lists every key, and each one's view says whether it is banned.
    const banned = state === "banned";
    const stored: KeyListQuery = {
      limit: 0,
      ...(plan !== undefined && { plan }),
      ...(accountId !== undefined && { accountId }),
      ...(state !== undefined && !banned && { state: state === "active" ? "live" : (state as KeyRecordState) }),
      ...(order !== undefined && { order }),
    };
    const filtered = q !== undefined || banned;
    // Without a filter of its own one read of a page and one more key (to know of a next page); with one, reads of 100 until the page is full.
    const batchSize = filtered ? MAX_PAGE : limit + 1;
    const page: KeyView[] = [];
    let afterId = cursor === undefined ? undefined : fromCursor(cursor);
    /** Where the next page starts, when there is one. */
    let resumeAfter: string | undefined;
    for (let scanned = 0; resumeAfter === undefined; ) {
      const batch = await deps.keys.list({ ...stored, limit: batchSize, ...(afterId !== undefined && { afterId }) });
      for (const record of batch) {
        if (!matches(record)) continue;
        const view = !banned && page.length === limit ? undefined : await viewOf(record, deps);
        if (view && banned && !view.states.includes("banned")) continue;
        if (page.length === limit) {
          resumeAfter = page.at(-1)!.id;
          break;
        }
        page.push(view!);
      }
      scanned += batch.length;
      if (resumeAfter !== undefined || batch.length < batchSize) break;
      afterId = batch.at(-1)!.id;
      // A search over many keys ends its page early: the next one goes on from here.
      if (scanned >= SEARCH_SCAN) resumeAfter = afterId;
    }
    const headers: Record<string, string> = {};
    if (resumeAfter !== undefined) {
      const next = new URLSearchParams({
        limit: String(limit),
        ...(search !== undefined && { q: search }),
        ...(plan !== undefined && { plan }),
        ...(accountId !== undefined && { account: accountId }),
        ...(state !== undefined && { state }),
        ...(order !== undefined && { sort: order }),
        cursor: cursorOf(resumeAfter),
      });
      headers.Link = `<${call.basePath}/keys?${next}>; rel="next"`;
    }
    return { status: 200, body: page, headers };
  },

  /**
   * `POST /keys`: a new key, shown once. With an Idempotency-Key a retry is answered as the
   * first attempt was, but without the secret, which is never kept: roll the key if that
   * answer was lost.
   */
  async createKey(call: Call, deps: AdminDeps): Promise<Outcome> {
    const value = await readBody(call, deps, NewKeySchema, "new key");
    const idempotencyKey = idempotencyKeyOf(call, deps);
    const created = await ruled("new key", () =>
      deps.life.create(defined(value), {
        actor: call.actor,
        ...(idempotencyKey !== undefined && { idempotencyKey }),
      }),
    );
    if (created.state === "no_account")
      throw new ApiError("invalid_body", "The request body is not a valid new key", [
        { path: "accountId", message: `must be the id of an account: none has the id ${value.accountId}` },
      ]);
    if (created.state !== "created" && created.state !== "replayed") refusedKey(created);
    const location = { Location: `${call.basePath}/keys/${created.record.id}` };
    return {
      status: 201,
      body: { ...(await viewOf(created.record, deps)), key: created.state === "created" ? created.key : null },
      headers: created.state === "created" ? location : { ...location, ...REPLAYED },
    };
  },

  async getKey(call: Call, deps: AdminDeps): Promise<Outcome> {
    return { status: 200, body: await viewOf(await found(call.id, deps), deps) };
  },

  /** `PATCH /keys/{id}`: plan, limits, label, expiry; the secret stays. */
  async updateKey(call: Call, deps: AdminDeps): Promise<Outcome> {
    const value = await readBody(call, deps, KeyChangesSchema, "change to a key");
    const change = await ruled("change to a key", () => deps.life.update(call.id, defined(value), call.actor));
    return { status: 200, body: await viewOf(changed(call.id, change), deps) };
  },

  /** `POST /keys/{id}/roll`: a new secret, shown once; the old one works for the overlap. */
  async rollKey(call: Call, deps: AdminDeps): Promise<Outcome> {
    const value = await readBody(call, deps, RollSchema, "roll");
    const idempotencyKey = idempotencyKeyOf(call, deps);
    const rolled = await deps.life.roll(call.id, value.overlapSeconds * 1000, {
      actor: call.actor,
      ...(idempotencyKey !== undefined && { idempotencyKey }),
    });
    if (rolled.state === "idempotency_key_in_use" || rolled.state === "idempotency_key_reused") refusedKey(rolled);
    if (rolled.state === "replayed")
      return { status: 200, body: { ...(await viewOf(rolled.record, deps)), key: null }, headers: REPLAYED };
    const record = changed(call.id, rolled);
    return {
      status: 200,
      body: { ...(await viewOf(record, deps)), key: rolled.state === "changed" ? rolled.key : null },
    };
  },

  /** `POST /keys/{id}/revoke`: refused everywhere within 5 s (on this server at once); revoking again answers the key as it is. */
  async revokeKey(call: Call, deps: AdminDeps): Promise<Outcome> {
    const change = await deps.life.revoke(call.id, call.actor);
    if (change.state === "missing") throw new ApiError("not_found", `No API key has the id ${call.id}`);
    return { status: 200, body: await viewOf(change.record, deps) };
  },

  /** `POST /keys/{id}/unban`: its ban ends now; the next request is decided by its limits. */
  async unbanKey(call: Call, deps: AdminDeps): Promise<Outcome> {
    const unbanned = await deps.life.unban(call.id, call.actor);
    if (unbanned.state === "missing") throw new ApiError("not_found", `No API key has the id ${call.id}`);
    if (unbanned.state === "unsupported") throw new ApiError("not_found", "This rate limiter cannot lift bans");
    return {
      status: 200,
      body: { ...(await viewOf(unbanned.record, deps)), unbanned: unbanned.state === "unbanned" },
    };
  },

  /** `GET /audit`: the trail, newest first, of one key (`keyId`) or all. */
  async listAudit(call: Call, deps: AdminDeps): Promise<Outcome> {
    const limit = pageLimit(call.url);
    const cursor = queryParameter(call.url, "cursor");
    const keyId = queryParameter(call.url, "keyId");
    const action = choice(call.url, "action", AUDIT_ACTIONS);
    const actor = queryParameter(call.url, "actor");
    let beforeId: number | undefined;
    if (cursor !== undefined) {
      beforeId = Number(fromCursor(cursor));
      if (!Number.isSafeInteger(beforeId))
        throw new ApiError("invalid_parameter", "Query parameter 'cursor' is not a cursor this API gave", [
          { path: "cursor", message: "must be a cursor from a previous page's Link header" },
        ]);
    }
    const entries = await deps.keys.auditTrail({
      limit: limit + 1,
      ...(beforeId !== undefined && { beforeId }),
      ...(keyId !== undefined && { keyId }),
      ...(action !== undefined && { action }),
      ...(actor !== undefined && { actor }),
    });
    const page = entries.slice(0, limit);
    const headers: Record<string, string> = {};
    if (entries.length > limit) {
      const next = new URLSearchParams({
        limit: String(limit),
        ...(keyId !== undefined && { keyId }),
        ...(action !== undefined && { action }),
        ...(actor !== undefined && { actor }),
        cursor: cursorOf(String(page.at(-1)!.id)),
      });
      headers.Link = `<${call.basePath}/audit?${next}>; rel="next"`;
    }
    return { status: 200, body: page.map((entry) => ({ ...entry, at: iso(entry.at) })), headers };
  },
};

/** The object without its undefined fields: what `exactOptionalPropertyTypes` calls absent. */
export function defined<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, given]) => given !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
