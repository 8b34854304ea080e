import type { Handler } from "../context.js";
import { ApiError } from "../errors.js";
import type { Scope } from "../ports.js";
import type { Route } from "../routes.js";
import type { RouteMatch } from "./find-route.js";

/** A request's handler and the path parameters it gets. */
export interface Routed {
  handler: Handler;
  params: Readonly<Record<string, string>>;
  /** The scope the operation needs of the caller's key, if any. */
  scope?: Scope;
}

/** The `Allow` header of a route: its methods, plus HEAD wherever GET is served. */
function allowedMethods(route: Route): string {
  const methods = Object.keys(route.methods);
  if (route.methods.GET) methods.push("HEAD");
  return methods.sort().join(", ");
}

/**
 * Stage 6, choose the handler: the one of the request's method on its route; `404 not_found`
 * when no route serves the path, `405 method_not_allowed` with `Allow` when the route has no
 * handler for the method. `HEAD` is served by the `GET` handler.
 */
export function chooseHandler(match: RouteMatch | undefined, method: string, pathname: string): Routed {
  if (!match) throw new ApiError("not_found", `No resource at ${pathname}`);
  const key = method === "HEAD" ? "GET" : method;
  // Own keys only: a request method named "valueOf" or "constructor" must not find Object.prototype.
  const handler = Object.hasOwn(match.route.methods, key) ? match.route.methods[key as "GET" | "POST"] : undefined;
  if (!handler)
    throw new ApiError("method_not_allowed", `${method} is not allowed on this path`, undefined, {
      Allow: allowedMethods(match.route),
    });
  const scope = match.route.scopes?.[key as "GET" | "POST"];
  return scope === undefined ? { handler, params: match.params } : { handler, params: match.params, scope };
}
