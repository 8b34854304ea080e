/**
 * One HTTP listener over the runtime at hand: `Bun.serve` when running on Bun (the compiled
 * binary), `Deno.serve` on Deno. Both hand the socket's address to the handler and stop
 * gracefully: no new connections, in-flight requests finish.
 */

import { outcomeWithin } from "./_outcome-within.js";

/**
 * Handles one request; `clientAddress()` gives the socket's remote address. It is a function
 * because Bun's `requestIP` costs measurably per request and only anonymous callers need it.
 */
export type ServerFetch = (request: Request, clientAddress: () => string | undefined) => Promise<Response>;

export interface ServeOptions {
  fetch: ServerFetch;
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  /**
   * The longest a request body may take to arrive (the handlers' deadline, which answers 408):
   * Bun's idle timeout is set past it, so that the deadline governs. At most `MAX_BODY_TIMEOUT_MS`.
   */
  bodyTimeoutMs: number;
}

/**
 * Bun closes a connection whose request has been in flight for its idle timeout (default 10
 * s), even while the body is still arriving, and says nothing: it is set this much past the
 * body deadline (Bun checks it every few seconds), so that a slow body that keeps arriving is
 * read, and a stalled one gets its 408 at the deadline.
 */
const IDLE_PAST_DEADLINE_S = 10;
/** Bun's longest idle timeout. */
const BUN_MAX_IDLE_S = 255;
/** The longest body deadline Bun's idle timeout can stay past. */
export const MAX_BODY_TIMEOUT_MS = (BUN_MAX_IDLE_S - IDLE_PAST_DEADLINE_S) * 1000;

export interface RunningServer {
  hostname: string;
  port: number;
  /** Stops accepting, waits up to `graceMs` for in-flight requests, then closes what is left. */
  /** Resolves true when every request finished in time, false when the grace period ran out first. */
  stop(graceMs: number): Promise<boolean>;
}

interface DenoServer {
  shutdown(): Promise<void>;
}

interface DenoRuntime {
  serve(
    options: {
      hostname: string;
      port: number;
      reusePort: boolean;
      onListen: (address: { hostname: string; port: number }) => void;
    },
    handler: (request: Request, info: { remoteAddr: { hostname: string } }) => Promise<Response>,
  ): DenoServer;
}

/**
 * An HTTP/1.0 request without `Host` with an absolute URL: Bun hands it over with its URL
 * as the bare request target (`/v1/pets`), which the URL parsers downstream misread (the
 * path read `/pets`: a 404 outside the API, without its headers).
 */
function withTarget(request: Request): Request {
  return request.url.startsWith("/") ? new Request(`http://localhost${request.url}`, request) : request;
}

function serveOnBun(bun: typeof Bun, options: ServeOptions): RunningServer {
  const server = bun.serve({
    hostname: options.hostname,
    port: options.port,
    // Bun's development mode answers errors with an HTML page; the API answers JSON only.
    development: false,
    // Out of development mode Bun sets SO_REUSEPORT by default: a second server on the same
    // address and port would start without error and the kernel would split connections
    // between the two. A port in use must be an error instead.
    reusePort: false,
    idleTimeout: Math.min(BUN_MAX_IDLE_S, Math.ceil(options.bodyTimeoutMs / 1000) + IDLE_PAST_DEADLINE_S),
    // Bun answers a declared body past this limit with its own bare 413 (no JSON, none of the
    // contract's headers) before the API sees the request. The API refuses bodies past its own
    // 16 KiB with its 413 without reading them, so Bun's limit is lifted: every 413 is the API's.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    fetch: (request, server) =>
      options.fetch(
        request.headers.has("host") ? request : withTarget(request),
        () => server.requestIP(request)?.address,
      ),
  });
  return {
    hostname: server.hostname ?? options.hostname,
    port: server.port ?? options.port,
    stop: async (graceMs) => {
      if ((await outcomeWithin(server.stop(), graceMs)) !== "timeout") return true;
      await server.stop(true);
      return false;
    },
  };
}

async function serveOnDeno(deno: DenoRuntime, options: ServeOptions): Promise<RunningServer> {
  let server: DenoServer | undefined;
  const address = await new Promise<{ hostname: string; port: number }>((resolve) => {
    server = deno.serve(
      // Deno's default too, said here as on Bun: a port in use is an error, never shared.
      { hostname: options.hostname, port: options.port, reusePort: false, onListen: resolve },
      (request, info) => options.fetch(request, () => info.remoteAddr.hostname),
    );
  });
  return {
    ...address,
    stop: async (graceMs) => {
      // Deno has no forced close: past the grace period the process simply exits.
      return (await outcomeWithin(server!.shutdown(), graceMs)) !== "timeout";
    },
  };
}

/**
 * Listens on `hostname:port` with the runtime's own server; throws when the runtime is
 * neither Bun nor Deno, or when the address cannot be bound.
 * @example const server = await serve({ fetch, hostname: "127.0.0.1", port: 8080, bodyTimeoutMs: 30_000 }); await server.stop(10_000);
 */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const runtime = globalThis as { Bun?: typeof Bun; Deno?: DenoRuntime };
  if (runtime.Bun) return serveOnBun(runtime.Bun, options);
  if (runtime.Deno) return serveOnDeno(runtime.Deno, options);
  throw new Error("petstore serve needs Bun or Deno (Node.js has no built-in fetch server)");
}
