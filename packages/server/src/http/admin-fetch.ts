// Imported as text so `bun build --compile` embeds the page in the binary (no build step for
// a user, nothing fetched from elsewhere); Deno reads them natively.
import accountViewJs from "./admin-page/account-view.mjs" with { type: "text" };
import accountsViewJs from "./admin-page/accounts-view.mjs" with { type: "text" };
import apiJs from "./admin-page/api.mjs" with { type: "text" };
import auditViewJs from "./admin-page/audit-view.mjs" with { type: "text" };
import chartJs from "./admin-page/chart.mjs" with { type: "text" };
import framesJs from "./admin-page/frames.mjs" with { type: "text" };
import keyViewJs from "./admin-page/key-view.mjs" with { type: "text" };
import keysViewJs from "./admin-page/keys-view.mjs" with { type: "text" };
import pageCss from "./admin-page/page.css" with { type: "text" };
import pageHtml from "./admin-page/page.html" with { type: "text" };
import pageJs from "./admin-page/page.mjs" with { type: "text" };
import tokensViewJs from "./admin-page/tokens-view.mjs" with { type: "text" };
import uiJs from "./admin-page/ui.mjs" with { type: "text" };
import {
  type Actor,
  adminTokenId,
  type AdminTokens,
  ApiError,
  type ApiKeys,
  type BesidePage,
  createAdmin,
  type HitInput,
  type IdempotencyStore,
  type PlanLimits,
  type PlanName,
  type RateLimiter,
  verifyAdminToken,
  type WindowPair,
} from "@petstore/core";
import type { ServerFetch } from "./serve.js";

export interface AdminFetchOptions {
  keys: ApiKeys;
  /** The API's limiter: keys' usage and bans, and the count of failed admin credentials. */
  limiter: RateLimiter;
  /** Where the Idempotency-Keys of creates and rolls are claimed: the API's. */
  idempotency: IdempotencyStore;
  adminTokens: AdminTokens;
  /** Told of every key changed: the API's `forgetKey` in this process, so that the change applies there at once. */
  onKeyChange: (keyId: string) => void;
  /** The `Host` names (without a port) the listener answers; another is refused before authentication. */
  allowHost: (host: string) => boolean;
  plans?: Partial<Record<PlanName, PlanLimits>>;
  /** One JSON access-log line per request (never a token: its id at most). */
  log: (line: string) => void;
  bodyTimeoutMs?: number;
}

/** Where the admin API answers on its listener. */
export const ADMIN_BASE_PATH = "/admin/v1";

/**
 * Failed admin credentials from one address for one token (the id a presented token names, or
 * none for a token no one has): at most 10 a minute and 100 a day, then refused; 20 refusals
 * in a minute ban them for 15 minutes.
 */
const FAILURE_WINDOWS: WindowPair = [
  { name: "minute", limit: 10, seconds: 60 },
  { name: "day", limit: 100, seconds: 86_400 },
];
const FAILURE_BAN = { threshold: 20, seconds: 900 };

/** The page asks nothing of any other host and runs no inline script. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The operator's page, beside the admin API. */
const pageFile =
  (text: string, type: string): BesidePage =>
  () =>
    new Response(text, { headers: { "Content-Type": type, "Content-Security-Policy": CONTENT_SECURITY_POLICY } });
/** The page's modules, each at `/` and its name: a view of the console is one more of them. */
const PAGE_MODULES: Record<string, string> = {
  "page.mjs": pageJs,
  "api.mjs": apiJs,
  "ui.mjs": uiJs,
  "frames.mjs": framesJs,
  "chart.mjs": chartJs,
  "keys-view.mjs": keysViewJs,
  "key-view.mjs": keyViewJs,
  "accounts-view.mjs": accountsViewJs,
  "account-view.mjs": accountViewJs,
  "audit-view.mjs": auditViewJs,
  "tokens-view.mjs": tokensViewJs,
};
const PAGE_FILES = new Map([
  ["/", pageFile(pageHtml, "text/html; charset=utf-8")],
  ["/index.html", pageFile(pageHtml, "text/html; charset=utf-8")],
  ["/page.css", pageFile(pageCss, "text/css; charset=utf-8")],
  ...Object.entries(PAGE_MODULES).map(
    ([name, text]) => [`/${name}`, pageFile(text, "text/javascript; charset=utf-8")] as const,
  ),
]);

/**
 * The admin listener's whole request path: the operator's page (`/`, its script and style),
 * and the admin API (`createAdmin`) under `/admin/v1`, authenticated by admin tokens
 * (`petstore admin-tokens create`) in the same database; a request of another site's page, or
 * for a host name the listener does not answer, is refused (`403`) before any of it. A request
 * without a credential is answered `401` and counts toward nothing. A wrong or revoked token
 * counts as a failure of its address for the token it names (a token no one has: for no
 * token), and too many are refused (`429`) before the token is even looked at, so tokens
 * cannot be guessed; the failures of others, from the same address too, never lock out a
 * valid token. An API key is never an admin token, nor the reverse. Every answer is never
 * cached and logged in one JSON line with the admin token's id.
 */
export function adminFetch(options: AdminFetchOptions): ServerFetch {
  const { limiter, adminTokens, log } = options;
  /** Who each authenticated request was, for its access-log line. */
  const actors = new WeakMap<Request, Actor>();

  /** `429` while the address failed too often with this token; the refusal counts toward its ban. */
  async function refuseLockedOut(hit: HitInput): Promise<void> {
    const state = await limiter.peek?.(hit);
    if (!state || (state.bannedUntil === undefined && state.windows.every((window) => window.remaining > 0))) return;
    const decision = await limiter.hit(hit);
    const until =
      decision.bannedUntil ??
      Math.max(...decision.windows.filter((window) => window.remaining === 0).map((window) => window.resetAt));
    const retryAfter = String(Math.max(1, Math.ceil((until - decision.now) / 1000)));
    throw new ApiError(
      decision.bannedUntil !== undefined ? "temporarily_banned" : "rate_limited",
      `Too many failed admin credentials from this address; retry after ${retryAfter} s`,
      undefined,
      { "Retry-After": retryAfter },
    );
  }

  async function authenticate(request: Request, address: string): Promise<Actor | undefined> {
    const authorization = request.headers.get("authorization");
    if (authorization === null) return undefined;
    const token = /^bearer +(\S+) *$/i.exec(authorization)?.[1] ?? "";
    const id = adminTokenId(token);
    // A token no one has shares one count per address, so that made-up ids fill no table.
    const known = id !== undefined && (await adminTokens.get(id)) !== undefined;
    const hit = { bucket: `admin-failures:${address}:${known ? id : "-"}`, windows: FAILURE_WINDOWS, ban: FAILURE_BAN };
    await refuseLockedOut(hit);
    const record = known ? await verifyAdminToken(adminTokens, token) : undefined;
    if (!record) {
      await limiter.hit(hit);
      throw new ApiError("unauthorized", "The admin token was refused", undefined, {
        "WWW-Authenticate": 'Bearer realm="petstore-admin", error="invalid_token"',
      });
    }
    const actor = { who: `admin:${record.id}`, from: address };
    actors.set(request, actor);
    return actor;
  }

  const admin = createAdmin({
    keys: options.keys,
    tokens: adminTokens,
    limiter,
    idempotency: options.idempotency,
    onKeyChange: options.onKeyChange,
    allowHost: options.allowHost,
    basePath: ADMIN_BASE_PATH,
    beside: (pathname) => PAGE_FILES.get(pathname),
    authenticate: (request, info) => authenticate(request, info?.clientAddress ?? "unknown"),
    ...(options.plans && { plans: options.plans }),
    ...(options.bodyTimeoutMs !== undefined && { bodyTimeoutMs: options.bodyTimeoutMs }),
  });

  return async (request, socketAddress) => {
    const started = performance.now();
    const address = socketAddress() ?? "unknown";
    const response = await admin.fetch(request, { clientAddress: address });
    const actor = actors.get(request);
    log(
      JSON.stringify({
        time: new Date().toISOString(),
        admin: true,
        requestId: response.headers.get("x-request-id"),
        method: request.method,
        path: new URL(request.url).pathname,
        status: response.status,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
        client: address,
        ...(actor && { tokenId: actor.who.slice("admin:".length) }),
      }),
    );
    return response;
  };
}
