import { IttyRouter } from "itty-router";
import { ApiError } from "../errors.js";

/** One path (an itty-router pattern under the base path, `/keys/:id`) and what serves each of its methods. */
export interface TableRoute<T> {
  path: string;
  methods: Partial<Record<string, T>>;
}

/** The route serving a path, and the path's parameters by name. */
export interface Match<R> {
  route: R;
  params: Readonly<Record<string, string>>;
}

/** What serves a request's method on its route; `method` is the table's (`GET` for a `HEAD`). */
export interface Served<T> {
  method: string;
  serves: T;
}

/**
 * The route table of the API and of the admin API: `find` the route serving a path under
 * `basePath`, looked up once per request. itty-router turns the patterns into regular
 * expressions, with the base; they are matched here against the path alone (its `fetch` would
 * parse the URL and its query again, and answer a promise, for an answer of the path alone).
 */
export function routeTable<R extends TableRoute<unknown>>(
  routes: readonly R[],
  basePath: string,
): (pathname: string) => Match<R> | undefined {
  const router = IttyRouter({ base: basePath });
  for (const route of routes) router.all(route.path);
  // router.routes holds the table's patterns in its order: [method, pattern, handlers, path].
  const patterns = router.routes.map(([, pattern], i) => ({ pattern, route: routes[i]! }));
  return (pathname) => {
    for (const { pattern, route } of patterns) {
      const found = pattern.exec(pathname);
      if (found) return { route, params: { ...found.groups } };
    }
    return undefined;
  };
}

/**
 * What serves `method` on the route found for `pathname`: `404 not_found` when no route serves
 * the path, `405 method_not_allowed` with `Allow` (its methods, and `HEAD` wherever `GET` is
 * served) when the route serves no such method. A `HEAD` is served by the `GET`.
 */
export function servedBy<T>(match: Match<TableRoute<T>> | undefined, method: string, pathname: string): Served<T> {
  if (!match) throw new ApiError("not_found", `No resource at ${pathname}`);
  const { methods } = match.route;
  const asked = method === "HEAD" ? "GET" : method;
  // Own keys only: a request method named "valueOf" or "constructor" must not find Object.prototype.
  const serves = Object.hasOwn(methods, asked) ? methods[asked] : undefined;
  if (serves === undefined) {
    const allow = Object.keys(methods);
    if (Object.hasOwn(methods, "GET")) allow.push("HEAD");
    throw new ApiError("method_not_allowed", `${method} is not allowed on ${pathname}`, undefined, {
      Allow: allow.sort().join(", "),
    });
  }
  return { method: asked, serves };
}
