import { Router } from "itty-router";
import type { Handler } from "../context.js";
import { ApiError } from "../errors.js";
import { serialized } from "../handlers/_respond.js";
import { openApiDocument } from "../openapi.js";
import { type Route, ROUTES } from "../routes.js";

/** A route and the path parameters found in a path. */
export interface RouteMatch {
  route: Route;
  /** Shared by every request of the same path: frozen. */
  params: Readonly<Record<string, string>>;
}

/** Finds the route of a request by its path; a promise only the first time a path is seen. */
export type FindRoute = (request: Request, pathname: string) => RouteMatch | undefined | Promise<RouteMatch | undefined>;

/** Paths whose match is remembered; past this many, the oldest is forgotten. */
const MATCHES_KEPT = 1_000;

/** The OpenAPI document of the API under `basePath`, served without a key (still counted). */
function openApiRoute(basePath: string): RouteMatch {
  const body = JSON.stringify(openApiDocument({ basePath }));
  const serve: Handler = async (_request, ctx) => serialized(ctx, body);
  return { route: { path: "/openapi.json", methods: { GET: serve }, public: true }, params: Object.freeze({}) };
}

/**
 * The route serving a request under `basePath`: `/openapi.json` exactly, else the first of
 * `ROUTES` whose pattern itty-router matches (a `Router` with the base, asked with the request
 * itself, which it gives `params` and `query`). The answer for a path is remembered (for the
 * latest 1,000 paths): asking itty-router parses a URL and tries each pattern, about a tenth of
 * a GET's time in the server, for an answer that depends on the path alone.
 */
export function routeFinder(basePath: string): FindRoute {
  const openApiPath = `${basePath}/openapi.json`;
  const openApi = openApiRoute(basePath);
  const router = Router({ base: basePath });
  // Every route takes every method here: `route` picks the handler by method.
  for (const route of ROUTES) router.all(route.path, ({ params }) => ({ route, params: Object.freeze({ ...params }) }));
  const matches = new Map<string, RouteMatch | undefined>();
  return (request, pathname) => {
    if (pathname === openApiPath) return openApi;
    if (matches.has(pathname)) return matches.get(pathname);
    return router.fetch(request).then((found: RouteMatch | undefined) => {
      if (matches.size >= MATCHES_KEPT) matches.delete(matches.keys().next().value!);
      matches.set(pathname, found);
      return found;
    });
  };
}

/** The `Allow` header of a route: its methods, plus HEAD wherever GET is served. */
export function allowedMethods(route: Route): string {
  const methods = Object.keys(route.methods);
  if (route.methods.GET) methods.push("HEAD");
  return methods.sort().join(", ");
}

/** A request's handler and the path parameters it gets. */
export interface Routed {
  handler: Handler;
  params: Readonly<Record<string, string>>;
}

/**
 * Stage 5, route: the handler of the request's method on its route; `404 not_found` when no
 * route serves the path, `405 method_not_allowed` with `Allow` when the route has no handler
 * for the method. `HEAD` is served by the `GET` handler.
 */
export function route(match: RouteMatch | undefined, method: string, pathname: string): Routed {
  if (!match) throw new ApiError("not_found", `No resource at ${pathname}`);
  const key = method === "HEAD" ? "GET" : method;
  // Own keys only: a request method named "valueOf" or "constructor" must not find Object.prototype.
  const handler = Object.hasOwn(match.route.methods, key) ? match.route.methods[key as "GET" | "POST"] : undefined;
  if (!handler) throw new ApiError("method_not_allowed", `${method} is not allowed on this path`, undefined, { Allow: allowedMethods(match.route) });
  return { handler, params: match.params };
}
