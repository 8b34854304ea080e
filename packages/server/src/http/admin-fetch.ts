// Imported as text so `bun build --compile` embeds the page in the binary (no build step for
// a user, nothing fetched from elsewhere); Deno reads them natively.
import pageCss from "./admin-page/page.css" with { type: "text" };
import pageHtml from "./admin-page/page.html" with { type: "text" };
import pageJs from "./admin-page/page.js" with { type: "text" };
import {
  type Actor,
  type AdminTokens,
  ApiError,
  type ApiKeys,
  type BesidePage,
  createAdmin,
  type PlanLimits,
  type PlanName,
  type RateLimiter,
  verifyAdminToken,
  type WindowPair,
} from "@petstore/core";
import type { ServerFetch } from "./serve.js";

export interface AdminFetchOptions {
  keys: ApiKeys;
  /** The API's limiter: keys' usage and bans, and the count of failed admin credentials per address. */
  limiter: RateLimiter;
  adminTokens: AdminTokens;
  plans?: Partial<Record<PlanName, PlanLimits>>;
  /** One JSON access-log line per request (never a token: its id at most). */
  log: (line: string) => void;
  bodyTimeoutMs?: number;
}

/** Where the admin API answers on its listener. */
export const ADMIN_BASE_PATH = "/admin/v1";

/** Failed admin credentials from one address: at most 10 a minute and 100 a day, then refused; 20 refusals in a minute ban it for 15 minutes. */
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
const PAGE_FILES = new Map([
  ["/", pageFile(pageHtml, "text/html; charset=utf-8")],
  ["/index.html", pageFile(pageHtml, "text/html; charset=utf-8")],
  ["/page.js", pageFile(pageJs, "text/javascript; charset=utf-8")],
  ["/page.css", pageFile(pageCss, "text/css; charset=utf-8")],
]);

/**
 * The admin listener's whole request path: the operator's page (`/`, its script and style),
 * and the admin API (`createAdmin`) under `/admin/v1`, authenticated by admin tokens
 * (`petstore admin-tokens create`) in the same database. An address whose credentials failed
 * too often is refused before its token is even looked at (`429`), so tokens cannot be
 * guessed; an API key is never an admin token, nor the reverse. Every answer is never cached
 * and logged in one JSON line with the admin token's id.
 */
export function adminFetch(options: AdminFetchOptions): ServerFetch {
  const { limiter, adminTokens, log } = options;
  /** Who each authenticated request was, for its access-log line. */
  const actors = new WeakMap<Request, Actor>();

  async function authenticate(request: Request, address: string): Promise<Actor | undefined> {
    const hit = { bucket: `admin-ip:${address}`, windows: FAILURE_WINDOWS, ban: FAILURE_BAN };
    const state = await limiter.peek?.(hit);
    if (state && (state.bannedUntil !== undefined || state.windows.some((window) => window.remaining === 0))) {
      const decision = await limiter.hit(hit); // a refusal, counted toward the address's ban
      const until =
        decision.bannedUntil ??
        Math.max(...decision.windows.filter((window) => window.remaining === 0).map((window) => window.resetAt));
      const retryAfter = String(Math.max(1, Math.ceil((until - decision.now) / 1000)));
      const banned = decision.bannedUntil !== undefined;
      throw new ApiError(
        banned ? "temporarily_banned" : "rate_limited",
        `Too many failed admin credentials from this address; retry after ${retryAfter} s`,
        undefined,
        { "Retry-After": retryAfter },
      );
    }
    const token = /^bearer +(\S+) *$/i.exec(request.headers.get("authorization") ?? "")?.[1];
    const record = token === undefined ? undefined : await verifyAdminToken(adminTokens, token);
    if (!record) {
      await limiter.hit(hit);
      return undefined;
    }
    const actor = { who: `admin:${record.id}`, from: address };
    actors.set(request, actor);
    return actor;
  }

  const admin = createAdmin({
    keys: options.keys,
    limiter,
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
