import { checkOptions } from "../_options-check.js";
import { ApiError, toApiError, toErrorResponse } from "../errors.js";
import { keyLife } from "../keys/key-life.js";
import { DEFAULT_PLANS, type PlanLimits } from "../plans.js";
import type { Actor, AdminTokens, ApiKeys, IdempotencyStore, PlanName, RateLimiter } from "../ports.js";
import { standardHeaders } from "../http/answer-headers.js";
import { answerBeside, type Beside, isUnder } from "../http/beside.js";
import type { ClientInfo } from "../http/client-address.js";
import { headResponse } from "../http/head-response.js";
import { pathnameOf } from "../http/pathname.js";
import { requestIdOf } from "../http/request-id.js";
import { routeTable, servedBy, type TableRoute } from "../http/route-table.js";
import { accountOperations } from "./account-operations.js";
import { adminOpenApi } from "./openapi.js";
import { type AdminDeps, type Call, type Outcome, operations } from "./operations.js";
import { tokenOperations } from "./token-operations.js";
import { usageOperations } from "./usage-operations.js";

export interface AdminOptions {
  keys: ApiKeys;
  /** The API's limiter: usage and bans are read from it, and lifted there (`peek`, `unban`). */
  limiter: RateLimiter;
  /**
   * Who is calling, for the audit trail: the host's own authentication (an admin token, a
   * session...). Undefined answers `401`; an `ApiError` thrown is answered as it is (a `429`
   * for an address that failed too often, say).
   */
  authenticate(request: Request, info: ClientInfo | undefined): Actor | undefined | Promise<Actor | undefined>;
  /**
   * Where the Idempotency-Keys of creates and rolls are claimed (the API's `idempotency`):
   * a retry is then answered as the first attempt was. Without it such a header is refused (`400`).
   */
  idempotency?: IdempotencyStore;
  /**
   * The admin tokens to list, create and revoke under `/tokens` (each change audited under the
   * token's id), when the host authenticates with them; without it those answer `404`.
   */
  tokens?: AdminTokens;
  /**
   * Told the id of every key changed (updated, rolled, revoked, or its account changed): pass the API's
   * `petstore.forgetKey`, so that the change applies to the API in this process at once.
   */
  onKeyChange?: (keyId: string) => void;
  /**
   * Whether the `Host` a request names (without its port) is one this admin API answers;
   * another is refused with `403` before authentication, so that a page of another name made
   * to resolve to this address (DNS rebinding) reaches nothing. Default: any.
   */
  allowHost?: (host: string) => boolean;
  /** Where the admin API is mounted. Default `/admin/v1`. */
  basePath?: string;
  /** The plans' numbers, as given to `createPetstore`. */
  plans?: Partial<Record<PlanName, PlanLimits>>;
  /** Unix ms: "in the past" for a new expiry is judged by it. Default `Date.now`. */
  clock?: () => number;
  /** Longest a request body may take to arrive. Default 30 s. */
  bodyTimeoutMs?: number;
  /** What the host serves beside the admin API, outside its base path (an operator's page), as `createPetstore`'s `beside`. */
  beside?: Beside;
  /** Called with every unexpected error (the client only sees `internal_error`). */
  onError?: (error: unknown, requestId: string) => void;
}

export interface Admin {
  /** A fetch handler, an arrow property: `(request, { clientAddress })`. */
  fetch: (request: Request, info?: ClientInfo) => Promise<Response>;
}

type Operation = (call: Call, deps: AdminDeps) => Promise<Outcome>;

/** Fetch Metadata (`Sec-Fetch-Site`) a request of the listener's own page, or of no page at all (typed in, a bookmark), carries. */
const OWN_SITE = new Set(["same-origin", "none"]);

/**
 * Refuses, before authentication, what a web page elsewhere makes a browser send: a request a
 * browser says came from another origin (`Sec-Fetch-Site` other than `same-origin`, or an
 * `Origin` naming another host), so that no page can call the admin API with the operator's
 * browser, nor count failures against the operator's address; and a `Host` the host does not
 * answer (`allowHost`: DNS rebinding). A `403` with the Error body.
 */
function refuseForeign(request: Request, allowHost: ((host: string) => boolean) | undefined): void {
  const site = request.headers.get("sec-fetch-site");
  const origin = request.headers.get("origin");
  const { host, hostname } = new URL(request.url);
  if ((site !== null && !OWN_SITE.has(site)) || (origin !== null && hostOf(origin) !== host))
    throw new ApiError("forbidden", "A request from another site's page is refused by the admin API");
  if (allowHost && !allowHost(hostname))
    throw new ApiError("forbidden", `The admin API does not answer the host name ${hostname}`);
}

/** The `host[:port]` of an `Origin`, or undefined for `null` and anything that is no URL. */
function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}

/** Each path (after the base path) and the operation of each method on it. */
const ROUTES: TableRoute<Operation | "document">[] = [
  { path: "/keys", methods: { GET: operations.listKeys, POST: operations.createKey } },
  { path: "/keys/:id", methods: { GET: operations.getKey, PATCH: operations.updateKey } },
  { path: "/keys/:id/roll", methods: { POST: operations.rollKey } },
  { path: "/keys/:id/revoke", methods: { POST: operations.revokeKey } },
  { path: "/keys/:id/unban", methods: { POST: operations.unbanKey } },
  { path: "/keys/:id/usage", methods: { GET: usageOperations.keyUsage } },
  { path: "/accounts", methods: { GET: accountOperations.listAccounts, POST: accountOperations.createAccount } },
  { path: "/accounts/:id", methods: { GET: accountOperations.getAccount, PATCH: accountOperations.updateAccount } },
  { path: "/accounts/:id/usage", methods: { GET: usageOperations.accountUsage } },
  { path: "/usage/top", methods: { GET: usageOperations.topUsage } },
  { path: "/audit", methods: { GET: operations.listAudit } },
  { path: "/tokens", methods: { GET: tokenOperations.listTokens, POST: tokenOperations.createToken } },
  { path: "/tokens/:id/revoke", methods: { POST: tokenOperations.revokeToken } },
  { path: "/openapi.json", methods: { GET: "document" } },
];

/**
 * The admin API of the key life (issue the keys a business sells, change their plan, roll,
 * expire, revoke them, lift bans, read their usage and the audit trail, the accounts they
 * belong to, and the admin tokens when given them) as one fetch handler, for a host to put
 * behind its own authentication (`authenticate`): JSON with the API's error bodies, never
 * cached, every change audited with who made it and from where. The `petstore` binary serves it
 * on its own listener, with admin tokens. The document of what it serves is at `openapi.json`.
 * @example
 * const admin = createAdmin({ keys, limiter, authenticate: (request) => mySession(request) });
 * app.all("/admin/v1/*", (c) => admin.fetch(c.req.raw, { clientAddress: ip(c) }));
 */
export function createAdmin(options: AdminOptions): Admin {
  checkOptions(
    "createAdmin",
    options,
    {
      keys: ["get", "list", "insert", "update", "roll", "revoke", "audit", "auditTrail", "getAccount", "countKeys"],
      limiter: ["hit"],
      authenticate: "function",
    },
    "createAdmin({ keys: adapters.keys, limiter: adapters.limiter, authenticate: (request) => yourOperator(request) })",
  );
  const basePath = (options.basePath ?? "/admin/v1").replace(/\/+$/, "");
  const clock = options.clock ?? Date.now;
  const deps: AdminDeps = {
    life: keyLife({
      keys: options.keys,
      limiter: options.limiter,
      clock,
      ...(options.idempotency && { idempotency: options.idempotency }),
      ...(options.onKeyChange && { onChange: options.onKeyChange }),
    }),
    keys: options.keys,
    ...(options.tokens && { tokens: options.tokens }),
    ...(options.idempotency && { idempotency: options.idempotency }),
    limiter: options.limiter,
    plans: { ...DEFAULT_PLANS, ...options.plans },
    clock,
    bodyTimeoutMs: options.bodyTimeoutMs ?? 30_000,
    idempotent: options.idempotency !== undefined,
    ...(options.onKeyChange && { onKeyChange: options.onKeyChange }),
  };
  const { beside, allowHost } = options;
  const onError =
    options.onError ??
    ((error: unknown, requestId: string) =>
      console.error(JSON.stringify({ level: "error", requestId, message: String(error) })));
  let document: string | undefined;
  const findRoute = routeTable(ROUTES, basePath);

  async function answer(
    request: Request,
    pathname: string,
    info: ClientInfo | undefined,
    headers: Record<string, string>,
  ): Promise<Response> {
    const match = findRoute(pathname);
    const { serves: operation } = servedBy(match, request.method, pathname);
    if (operation === "document") {
      document ??= JSON.stringify(adminOpenApi(basePath));
      return new Response(document, { status: 200, headers });
    }
    const actor = await options.authenticate(request, info);
    if (actor === undefined)
      throw new ApiError("unauthorized", "An admin credential is required", undefined, {
        "WWW-Authenticate": 'Bearer realm="petstore-admin"',
      });
    const outcome = await operation(
      { request, url: new URL(request.url), actor, id: match!.params.id ?? "", basePath },
      deps,
    );
    // A text body (CSV) goes as it is, under the Content-Type its operation set.
    const body = typeof outcome.body === "string" ? outcome.body : JSON.stringify(outcome.body);
    return new Response(body, {
      status: outcome.status,
      headers: { ...headers, ...outcome.headers },
    });
  }

  return {
    fetch: async (request, info) => {
      const requestId = requestIdOf(request);
      const pathname = pathnameOf(request.url);
      const headers = { ...standardHeaders(requestId), "Content-Type": "application/json" };
      let response: Response;
      try {
        refuseForeign(request, allowHost);
        response =
          beside && !isUnder(basePath, pathname)
            ? await answerBeside(beside, request, requestId, pathname)
            : await answer(request, pathname, info, headers);
      } catch (thrown) {
        const error = toApiError(thrown);
        if (error.code === "internal_error") onError(thrown, requestId);
        response = toErrorResponse(error, headers);
      }
      return request.method === "HEAD" ? headResponse(response) : response;
    },
  };
}
