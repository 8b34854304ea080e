import { ApiError, type ClientInfo, createPetstore, type PetstoreOptions, type ResponseEvent, toErrorResponse } from "@petstore/core";
import { headResponse, pathnameOf, requestIdOf, standardHeaders } from "@petstore/core/internal";
import { docs } from "./docs.js";
import type { Health } from "./health.js";
import type { ServerMetrics } from "./metrics/server-metrics.js";
import type { ServerFetch } from "./serve.js";

export interface ServerFetchOptions {
  /** The API's options but its mount point and response hook, which the server sets. */
  api: Omit<PetstoreOptions, "basePath" | "onResponse">;
  /** Where the API is mounted; every other path but `/healthz` and `/docs` is a 404. */
  basePath: string;
  /** What `/healthz` answers; told of every storage failure a request meets. */
  health: Health;
  /** Receives one JSON access-log line per request. */
  log: (line: string) => void;
  /** Counts every answer (`--metrics-listen`); none by default. */
  metrics?: ServerMetrics;
}

/**
 * `/healthz`, `/docs` and the 404 for paths outside the API, with core's edge: the request id,
 * the headers every answer carries, the Error body, and `HEAD` without a body.
 */
async function answerOutside(
  request: Request,
  pathname: string,
  health: Health,
  reference: (pathname: string) => Response | undefined,
): Promise<Response> {
  const headers = standardHeaders(requestIdOf(request));
  const page = reference(pathname);
  let response: Response;
  if (pathname !== "/healthz" && page === undefined) {
    response = toErrorResponse(new ApiError("not_found", `No resource at ${pathname}`), headers);
  } else if (request.method !== "GET" && request.method !== "HEAD") {
    response = toErrorResponse(new ApiError("method_not_allowed", `${request.method} is not allowed on this path`, undefined, { Allow: "GET, HEAD" }), headers);
  } else if (page !== undefined) {
    response = page;
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  } else {
    const problem = await health.problem();
    const notice = problem === undefined ? await health.notice() : undefined;
    const [status, body] = problem === undefined ? [200, { status: "ok", ...(notice && { notice }) }] : [503, { status: "unavailable", reason: problem }];
    response = new Response(JSON.stringify(body), { status, headers: { ...headers, "Content-Type": "application/json", ...(problem && { "Retry-After": "1" }) } });
  }
  return request.method === "HEAD" ? headResponse(response) : response;
}

/** A key pasted into a path by mistake (`/v1/pets/psk_...`) never reaches the log. */
function withoutKeys(pathname: string): string {
  return pathname.includes("psk_") ? pathname.replace(/psk_[A-Za-z0-9_-]*/g, "psk_[redacted]") : pathname;
}

/** `time` of the access log: one ISO string per millisecond, however many lines share it. */
function isoClock(): () => string {
  let ms = 0;
  let iso = "";
  return () => {
    const now = Date.now();
    if (now !== ms) [ms, iso] = [now, new Date(now).toISOString()];
    return iso;
  };
}

/**
 * The server's whole request path: the API under `basePath`, `GET /healthz` outside it
 * (no auth: 200 when the API can serve reads and writes now, else 503 with the reason), the API reference at `GET /docs` (no auth),
 * a 404 elsewhere, and one access-log line per request (never key material: the key's id at
 * most).
 */
export function serverFetch(options: ServerFetchOptions): ServerFetch {
  const { basePath, health, log, metrics } = options;
  const reference = docs(`${basePath}/openapi.json`);
  const time = isoClock();
  const logAnswer = (request: Request, pathname: string, event: Omit<ResponseEvent, "request">) => {
    const line: Record<string, string | number | boolean> = {
      time: time(),
      requestId: event.requestId,
      method: request.method,
      path: withoutKeys(pathname),
      // nginx's 499 "client closed request": the client left mid-request; no server error happened.
      status: event.aborted ? 499 : event.response.status,
      durationMs: Math.round(event.durationMs * 100) / 100,
    };
    if (event.aborted) line.aborted = true;
    if (event.keyId !== undefined) line.keyId = event.keyId;
    // Known when the request had no valid key (its rate-limit bucket) or was not for the API.
    if (event.clientAddress !== undefined) line.client = event.clientAddress;
    log(JSON.stringify(line));
    if (metrics) metrics.observe({ ...event, method: request.method, route: routeLabel(pathname, event.route) });
  };
  /** A bounded label: the API's route patterns, the server's own paths, or `other` (never the raw path). */
  const routeLabel = (pathname: string, route: string | undefined) => {
    if (route !== undefined) return `${basePath}${route}`;
    if (pathname === "/healthz") return "/healthz";
    return pathname === "/docs" || pathname.startsWith("/docs/") ? "/docs" : "other";
  };
  // The API's answers are logged from its own hook, which knows the key's id and the request id.
  const petstore = createPetstore({
    ...options.api,
    basePath,
    onResponse: (event) => {
      if (event.response.status === 503) health.storageFailed();
      logAnswer(event.request, pathnameOf(event.request.url), event);
    },
  });
  async function outside(request: Request, pathname: string, socketAddress: () => string | undefined): Promise<Response> {
    const started = performance.now();
    const response = await answerOutside(request, pathname, health, reference);
    const requestId = response.headers.get("x-request-id")!;
    const clientAddress = socketAddress();
    logAnswer(request, pathname, { response, requestId, durationMs: performance.now() - started, ...(clientAddress === undefined ? {} : { clientAddress }) });
    return response;
  }
  // Not async: the API's answer is passed on as it is, without another promise around it.
  return (request, socketAddress) => {
    const pathname = pathnameOf(request.url);
    if (pathname === basePath || pathname.startsWith(`${basePath}/`)) return petstore.fetch(request, new LazyClientInfo(socketAddress));
    return outside(request, pathname, socketAddress);
  };
}

/** The socket's address, looked up only if read: Bun's lookup costs, and only anonymous callers need it. */
class LazyClientInfo implements ClientInfo {
  readonly #lookUp: () => string | undefined;
  constructor(lookUp: () => string | undefined) {
    this.#lookUp = lookUp;
  }
  get clientAddress(): string | undefined {
    return this.#lookUp();
  }
}
