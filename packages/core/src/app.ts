import { ApiError, type ErrorCode, RequestAbortedError, toApiError, toErrorResponse } from "./errors.js";
import { type Context, type DeprecationDates, GET_PET_DEPRECATED_AT, GET_PET_SUNSET_AT } from "./context.js";
import { openApiDocument } from "./openapi.js";
import { cachePetPages } from "./pet-page-cache.js";
import { addressBucket, clientAddress, trustedProxies } from "./pipeline/client-address.js";
import { headResponse } from "./pipeline/head-response.js";
import { type Identity, keyIdentifier } from "./pipeline/identify-caller.js";
import { addRateLimitHeaders, addUndecidedRateLimitHeaders, DEFAULT_BAN, DEFAULT_PLANS, limitsResolver, type PlanLimits } from "./pipeline/rate-limit.js";
import type { ApiKeyRecord, ApiKeys, BanPolicy, Decision, IdempotencyStore, PetStore, PlanName, RateLimiter } from "./ports.js";
import { allowedMethods, routeMatcher } from "./routes.js";

export interface PetstoreOptions {
  store: PetStore;
  keys: ApiKeys;
  limiter: RateLimiter;
  idempotency: IdempotencyStore;
  /** Where the API is mounted. Default `/v1`. */
  basePath?: string;
  /** Overrides of the plans' numbers; the specification's table is the default. */
  plans?: Partial<Record<PlanName, PlanLimits>>;
  /** Default: more than 30 refusals within one minute window bans the bucket for 600 s. */
  ban?: Partial<BanPolicy>;
  /** Unix ms; injectable so windows, bans and the sunset date are testable without sleeping. */
  clock?: () => number;
  /** Proxies (CIDR ranges) whose `X-Forwarded-For` is believed. Default: none. */
  trustProxy?: readonly string[];
  /** Send the IETF draft `RateLimit` and `RateLimit-Policy` headers. Default true. */
  ietfRateLimitHeaders?: boolean;
  /** How long a verified key is trusted before storage is asked again. Default 5000 ms. */
  keyCacheMs?: number;
  /** Dates of the deprecated `getPet`; default 1 Jan 2026 and 5 Dec 2030. */
  deprecation?: Partial<DeprecationDates>;
  /** Called with every unexpected error (the client only sees `internal_error`). */
  onError?: (error: unknown, requestId: string) => void;
  /** Called once per answer, before it is returned: for access logs and metrics. */
  onResponse?: (event: ResponseEvent) => void;
}

/** What an access log may know of an answer; never key material, the key's id at most. */
export interface ResponseEvent {
  request: Request;
  response: Response;
  requestId: string;
  /** The authenticated key's id; absent for anonymous or rejected callers. */
  keyId?: string;
  /** The client's address, when it was needed: the rate-limit bucket of a caller without a valid key. */
  clientAddress?: string;
  /** Milliseconds from `fetch` being called to the answer. */
  durationMs: number;
  /**
   * For metrics, bounded values only. `route`: the pattern of `ROUTES` the path matches
   * (`/pets/:petId`), or `/openapi.json`, whatever the answer (a 401 or 429 too); absent for
   * a path no route serves.
   */
  route?: string;
  /** The identified caller's plan; absent for callers without a valid key (limited as Free). */
  plan?: PlanName;
  /** The error code, when the answer is an error (`rate_limited`, `unauthorized`, ...). */
  errorCode?: ErrorCode;
  /** `hit`: the key was verified from the key cache; `miss`: storage was asked. Absent when no well-formed key was sent. */
  keyCache?: "hit" | "miss";
  /**
   * True on the refusal that began a ban: its ban lasts exactly `ban.seconds` from now, and it
   * is the first such refusal of that bucket this process answered (several refusals within
   * the same millisecond report one ban).
   */
  banStarted?: true;
  /** The client closed the connection before its request body arrived: it is unlikely to read the answer. */
  aborted?: true;
}

/** What the host knows about the connection. */
export interface ClientInfo {
  /** The socket's remote address; names the rate-limit bucket of anonymous callers. */
  clientAddress?: string | undefined;
}

export interface Petstore {
  /** A fetch handler; an arrow property, so it can be passed around unbound. */
  fetch: (request: Request, info?: ClientInfo) => Promise<Response>;
}

const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** The path of an absolute request URL, without parsing all of it (this runs per request). */
function pathnameOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return "/";
  const query = url.indexOf("?", start);
  const fragment = url.indexOf("#", start);
  const end = query === -1 ? fragment : fragment === -1 ? query : Math.min(query, fragment);
  return end === -1 ? url.slice(start) : url.slice(start, end);
}

function logError(error: unknown, requestId: string): void {
  console.error(JSON.stringify({ level: "error", requestId, error: error instanceof Error ? error.stack : String(error) }));
}

/**
 * The Pet Store API as one fetch handler: identify the caller, rate-limit, authorize, route,
 * validate, run; the contract's headers on every answer.
 * @example
 * const petstore = createPetstore({ store, keys, limiter, idempotency });
 * Bun.serve({ fetch: (request, server) => petstore.fetch(request, { clientAddress: server.requestIP(request)?.address }) });
 */
export function createPetstore(options: PetstoreOptions): Petstore {
  const basePath = (options.basePath ?? "/v1").replace(/\/+$/, "");
  const clock = options.clock ?? Date.now;
  const limitsOf = limitsResolver({ ...DEFAULT_PLANS, ...options.plans });
  const ban = { ...DEFAULT_BAN, ...options.ban };
  const ietf = options.ietfRateLimitHeaders ?? true;
  const deprecation = { deprecatedAt: GET_PET_DEPRECATED_AT, sunsetAt: GET_PET_SUNSET_AT, ...options.deprecation };
  const isTrustedProxy = options.trustProxy?.length ? trustedProxies(options.trustProxy) : undefined;
  const identify = keyIdentifier(options.keys, options.keyCacheMs ?? 5_000);
  const onError = options.onError ?? logError;
  const openApiPath = `${basePath}/openapi.json`;
  const openApiBody = JSON.stringify(openApiDocument({ basePath }));

  const routeOf = routeMatcher(basePath);
  // Pages of pets kept while the store says no pet changed (when it can say so).
  const store = cachePetPages(options.store);
  /** The end of the latest ban each bucket began, so a ban is reported once (bounded: the oldest go first). */
  const bansSeen = new Map<string, number>();
  /** A ban began at this refusal: it lasts exactly `ban.seconds` from now, and this process has not reported it yet. */
  function isNewBan(bucket: string, bannedUntil: number, now: number): boolean {
    if (bannedUntil !== now + ban.seconds * 1000 || bansSeen.get(bucket) === bannedUntil) return false;
    if (bansSeen.size >= 1_000) bansSeen.delete(bansSeen.keys().next().value!);
    bansSeen.set(bucket, bannedUntil);
    return true;
  }

  /** Steps 3 to 6 of the contract's order of checks, for an identified and counted request. */
  async function respond(request: Request, pathname: string, identity: Identity, decision: Decision, headers: Record<string, string>, now: number): Promise<Response> {
    const retryAfter = headers["Retry-After"];
    if (decision.bannedUntil !== undefined) {
      throw new ApiError("temporarily_banned", `Temporarily banned after repeated requests over the limit; retry after ${retryAfter} s`);
    }
    if (!decision.allowed) throw new ApiError("rate_limited", `Rate limit exceeded; retry after ${retryAfter} s`);
    if (pathname === openApiPath) {
      if (request.method !== "GET" && request.method !== "HEAD") {
        throw new ApiError("method_not_allowed", `${request.method} is not allowed on this path`, undefined, { Allow: "GET, HEAD" });
      }
      return new Response(openApiBody, { headers: { ...headers, "Content-Type": "application/json" } });
    }
    if (!identity.caller) {
      const challenge = identity.sentKey ? 'Bearer realm="petstore", error="invalid_token"' : 'Bearer realm="petstore"';
      const message = identity.sentKey ? "The API key is invalid or revoked" : "An API key is required: send Authorization: Bearer <key>";
      throw new ApiError("unauthorized", message, undefined, { "WWW-Authenticate": challenge });
    }
    const match = await routeOf(pathname);
    if (!match) throw new ApiError("not_found", `No resource at ${pathname}`);
    const method = request.method === "HEAD" ? "GET" : request.method;
    // Own keys only: a request method named "valueOf" or "constructor" must not find Object.prototype.
    const handler = Object.hasOwn(match.route.methods, method) ? match.route.methods[method as "GET" | "POST"] : undefined;
    if (!handler) {
      throw new ApiError("method_not_allowed", `${request.method} is not allowed on this path`, undefined, {
        Allow: allowedMethods(match.route),
      });
    }
    const ctx: Context = { store, idempotency: options.idempotency, params: match.params, caller: identity.caller, now, basePath, deprecation, headers };
    return handler(request, ctx);
  }

  return {
    fetch: async (request, info) => {
      const started = performance.now();
      const now = clock();
      const incomingId = request.headers.get("x-request-id");
      const requestId = incomingId !== null && REQUEST_ID.test(incomingId) ? incomingId : crypto.randomUUID();
      // Every answer's headers, the rate-limit ones once the limiter decided.
      const headers: Record<string, string> = { "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "X-Request-Id": requestId };
      const pathname = pathnameOf(request.url);
      let response: Response;
      let identity: Identity | undefined;
      let client: string | undefined;
      let errorCode: ErrorCode | undefined;
      let banStarted = false;
      let aborted = false;
      try {
        identity = await identify(request, now);
        let bucket: string;
        if (identity.caller) bucket = `key:${identity.caller.id}`;
        else {
          client = clientAddress(request, info?.clientAddress, isTrustedProxy);
          bucket = `ip:${addressBucket(client)}`;
        }
        const limits = limitsOf(identity.caller);
        const decision = await options.limiter.hit({ bucket, windows: limits.windows, ban, now });
        addRateLimitHeaders(headers, decision, limits, now, ietf);
        if (decision.bannedUntil !== undefined) banStarted = isNewBan(bucket, decision.bannedUntil, now);
        response = await respond(request, pathname, identity, decision, headers, now);
      } catch (thrown) {
        aborted = thrown instanceof RequestAbortedError;
        const error = toApiError(thrown);
        errorCode = error.code;
        if (error.code === "internal_error") onError(thrown, requestId);
        // Storage failed before the limiter decided (the key lookup or the limiter itself).
        if (!("X-RateLimit-Limit" in headers)) addUndecidedRateLimitHeaders(headers, limitsOf(identity?.caller), now, ietf, error.headers?.["Retry-After"]);
        response = toErrorResponse(error, headers);
      }
      if (request.method === "HEAD") response = await headResponse(response);
      if (options.onResponse) {
        const event: ResponseEvent = { request, response, requestId, durationMs: performance.now() - started };
        if (identity?.caller) {
          event.keyId = identity.caller.id;
          event.plan = identity.caller.plan;
        }
        if (identity?.keyCache) event.keyCache = identity.keyCache;
        if (client !== undefined) event.clientAddress = client;
        if (errorCode !== undefined) event.errorCode = errorCode;
        if (banStarted) event.banStarted = true;
        // Remembered per path by `routeOf`: a path seen before costs a lookup in a Map, and no await.
        let match = pathname === openApiPath ? undefined : routeOf(pathname);
        if (match instanceof Promise) match = await match;
        const route = pathname === openApiPath ? "/openapi.json" : match?.route.path;
        if (route !== undefined) event.route = route;
        if (aborted) event.aborted = true;
        options.onResponse(event);
      }
      return response;
    },
  };
}
