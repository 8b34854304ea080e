import type { ServerFetch } from "../http/serve.js";
import type { ServerMetrics } from "./server-metrics.js";

/** The Prometheus text exposition format's media type. */
const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * The metrics listener's whole request path: `GET /metrics` (and HEAD) answers the exposition,
 * anything else a plain 404 or 405. Its own listener: the API's port never shows metrics.
 */
export function metricsFetch(metrics: ServerMetrics): ServerFetch {
  return async (request) => {
    if (new URL(request.url).pathname !== "/metrics")
      return new Response("Not found: the metrics are at /metrics\n", { status: 404 });
    if (request.method !== "GET" && request.method !== "HEAD") {
      return new Response("Method not allowed\n", { status: 405, headers: { Allow: "GET, HEAD" } });
    }
    const headers = { "Content-Type": CONTENT_TYPE, "Cache-Control": "no-store" };
    return new Response(request.method === "HEAD" ? null : metrics.render(), { headers });
  };
}
