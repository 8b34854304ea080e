import type { ResponseEvent, Settings } from "../options.js";
import type { Exchange } from "./exchange.js";
import { headResponse } from "./head-response.js";
import type { FindRoute, RouteMatch } from "./route.js";

/**
 * The last stage: a `HEAD` answer loses its body (keeping its length), and `onResponse` hears
 * of the answer with what the stages found. A promise only when one is needed (a `HEAD`, or a
 * path whose route is not yet remembered): this runs on every request.
 */
export function finishStage(settings: Pick<Settings, "onResponse">, findRoute: FindRoute): (exchange: Exchange, response: Response) => Response | Promise<Response> {
  const { onResponse } = settings;
  if (!onResponse) return (exchange, response) => (exchange.request.method === "HEAD" ? headResponse(response) : response);

  /** `route` is known for every path routing would serve, whatever the answer (a 401 or 429 too). */
  function report(event: ResponseEvent, match: RouteMatch | undefined, aborted: boolean): Response {
    if (match) event.route = match.route.path;
    if (aborted) event.aborted = true;
    onResponse!(event);
    return event.response;
  }

  function notify(exchange: Exchange, response: Response): Response | Promise<Response> {
    const event: ResponseEvent = { request: exchange.request, response, requestId: exchange.requestId, durationMs: performance.now() - exchange.started };
    const { identity } = exchange;
    if (identity?.caller) {
      event.keyId = identity.caller.id;
      event.plan = identity.caller.plan;
    }
    if (identity?.keyCache) event.keyCache = identity.keyCache;
    if (exchange.client !== undefined) event.clientAddress = exchange.client;
    if (exchange.errorCode !== undefined) event.errorCode = exchange.errorCode;
    if (exchange.banStarted) event.banStarted = true;
    // Remembered per path by `findRoute`: a path seen before costs a lookup in a Map, and no await.
    const match = findRoute(exchange.request, exchange.pathname);
    return match instanceof Promise ? match.then((found) => report(event, found, exchange.aborted)) : report(event, match, exchange.aborted);
  }

  return (exchange, response) => {
    if (exchange.request.method === "HEAD") return headResponse(response).then((head) => notify(exchange, head));
    return notify(exchange, response);
  };
}
