import type { Handler } from "../context.js";
import { servedBy } from "../http/route-table.js";
import type { Scope } from "../ports.js";
import type { RouteMatch } from "../routes.js";

/** A request's handler and the path parameters it gets. */
export interface Routed {
  handler: Handler;
  params: Readonly<Record<string, string>>;
  /** The scope the operation needs of the caller's key, if any. */
  scope?: Scope;
}

/**
 * Stage 6, choose the handler: the one of the request's method on its route (`404` when no
 * route serves the path, `405` with `Allow` when the route has no handler for the method: the
 * route table's rule), and the scope the operation needs.
 */
export function chooseHandler(match: RouteMatch | undefined, method: string, pathname: string): Routed {
  const { method: served, serves: handler } = servedBy(match, method, pathname);
  const scope = match!.route.scopes?.[served as "GET" | "POST"];
  return scope === undefined ? { handler, params: match!.params } : { handler, params: match!.params, scope };
}
