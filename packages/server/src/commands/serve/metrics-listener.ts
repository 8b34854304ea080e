import { metricsFetch } from "../../metrics/metrics-fetch.js";
import type { ServerMetrics } from "../../metrics/server-metrics.js";
import { type RunningServer, type ServerFetch, serve } from "../../http/serve.js";
import type { Io } from "../_command.js";
import type { ServeConfig } from "./config.js";
import { listenFailure } from "./listen-failure.js";
import { localUrl, logLine } from "./log.js";

/** Counts the requests being answered; only when metrics are on (it adds a promise per request). */
export function counted(fetch: ServerFetch, metrics: ServerMetrics | undefined): ServerFetch {
  if (!metrics) return fetch;
  return async (request, clientAddress) => {
    metrics.requestStarted();
    try {
      return await fetch(request, clientAddress);
    } finally {
      metrics.requestFinished();
    }
  };
}

/** The metrics listener, when asked for: started before the API's, so it is there for the first request. */
export async function startMetrics(
  config: ServeConfig,
  metrics: ServerMetrics | undefined,
  io: Io,
): Promise<RunningServer | undefined> {
  if (!config.metricsListen || !metrics) return undefined;
  const { host, port } = config.metricsListen;
  const server = await serve({
    fetch: metricsFetch(metrics),
    hostname: host,
    port,
    bodyTimeoutMs: config.bodyTimeoutMs,
  }).catch((error: unknown) => {
    throw new Error(listenFailure(" for metrics", host, port, error, "--metrics-listen HOST:PORT"));
  });
  logLine(io, "metrics listening", {
    url: `${localUrl(server.hostname, server.port)}/metrics`,
    host: server.hostname,
    port: server.port,
  });
  return server;
}
