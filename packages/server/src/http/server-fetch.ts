import { type ClientInfo, createPetstore, type PetstoreOptions, type ResponseEvent } from "@petstore/core";
import { docs } from "./docs.js";
import type { Health } from "./health.js";
import type { ServerMetrics } from "../metrics/server-metrics.js";
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

/** The methods the API's routes serve (HEAD by GET): another one on a route is a 405, kept apart from none. */
const SERVED_METHODS = new Set(["GET", "HEAD", "POST"]);

/** `GET /healthz`: 200 when the API can serve reads and writes now, else 503 with the reason. */
async function healthAnswer(health: Health): Promise<Response> {
  const problem = await health.problem();
  if (problem !== undefined)
    return Response.json({ status: "unavailable", reason: problem }, { status: 503, headers: { "Retry-After": "1" } });
  const notice = await health.notice();
  return Response.json({ status: "ok", ...(notice && { notice }) });
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

/** The server's request path, and what it must write before storage closes. */
export interface ServerApi {
  fetch: ServerFetch;
  /** Writes the keys' usage counts waiting in this server (see `Petstore.flush`). */
  flush(): Promise<void>;
  /** The API's `forgetKey`: the admin listener in the same process tells it of each change to a key. */
  forgetKey(keyId: string): void;
}

/**
 * The server's whole request path: the API under `basePath`, `GET /healthz` outside it
 * (no auth: 200 when the API can serve reads and writes now, else 503 with the reason), the API reference at `GET /docs` (no auth),
 * a 404 elsewhere, and one access-log line per request (never key material: the key's id at
 * most).
 */
export function serverFetch(options: ServerFetchOptions): ServerApi {
  const { basePath, health, log, metrics } = options;
  const reference = docs(`${basePath}/openapi.json`);
  const time = isoClock();
  const logAnswer = (event: ResponseEvent) => {
    const line: Record<string, string | number | boolean> = {
      time: time(),
      requestId: event.requestId,
      method: event.request.method,
      path: withoutKeys(event.pathname),
      // nginx's 499 "client closed request": the client left mid-request; no server error happened.
      status: event.aborted ? 499 : event.response.status,
      durationMs: Math.round(event.durationMs * 100) / 100,
    };
    if (event.aborted) line.aborted = true;
    if (event.keyId !== undefined) line.keyId = event.keyId;
    // Known when the request had no valid key (its rate-limit bucket) or was not for the API.
    if (event.clientAddress !== undefined) line.client = event.clientAddress;
    log(JSON.stringify(line));
    if (metrics)
      metrics.observe({ ...event, method: event.request.method, route: routeLabel(event.pathname, event.route) });
  };
  /** What a request asked, bounded for health's memory: a method a route serves on its pattern, else `a request`. */
  const requestKind = (event: ResponseEvent) =>
    event.route !== undefined && SERVED_METHODS.has(event.request.method)
      ? `${event.request.method} ${routeLabel(event.pathname, event.route)}`
      : "a request";
  /** A bounded label: the API's route patterns, the server's own paths, or `other` (never the raw path). */
  const routeLabel = (pathname: string, route: string | undefined) => {
    if (route !== undefined) return `${basePath}${route}`;
    if (pathname === "/healthz") return "/healthz";
    return pathname === "/docs" || pathname.startsWith("/docs/") ? "/docs" : "other";
  };
  // Every answer, the API's and those beside it, comes from core's pipeline and is logged from its hook.
  const petstore = createPetstore({
    ...options.api,
    basePath,
    beside: (pathname) => (pathname === "/healthz" ? () => healthAnswer(health) : reference(pathname)),
    onResponse: (event) => {
      // The API's own answers, not /healthz's: a 503 of storage, or a success that says it serves again.
      if (event.errorCode === "service_unavailable") health.storageFailed(requestKind(event));
      else if (event.route !== undefined && !event.aborted && event.response.status < 300)
        health.storageServed(requestKind(event));
      logAnswer(event);
    },
  });
  return {
    fetch: (request, socketAddress) => petstore.fetch(request, new LazyClientInfo(socketAddress)),
    flush: petstore.flush,
    forgetKey: petstore.forgetKey,
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
