import { IttyRouter } from "itty-router";
import type { Settings } from "../options.js";
import { type Route, ROUTES } from "../routes.js";

/** A route and the path parameters found in a path. */
export interface RouteMatch {
  route: Route;
  params: Readonly<Record<string, string>>;
}

/**
 * Before the stages, find the route: the route of `ROUTES` (the table) serving a request's
 * path under `basePath`; looked up once, whatever the answer will be (the last stage reports
 * it). itty-router turns the table's patterns into regular expressions, with the base; they
 * are matched here, against the path alone (its `fetch` would parse the URL and its query
 * again, and answer a promise, for an answer that depends on the path alone).
 */
export function findRouteStage(settings: Pick<Settings, "basePath">): (pathname: string) => RouteMatch | undefined {
  const router = IttyRouter({ base: settings.basePath });
  for (const route of ROUTES) router.all(route.path);
  // router.routes holds the table's patterns in its order: [method, pattern, handlers, path].
  const patterns = router.routes.map(([, pattern], i) => ({ pattern, route: ROUTES[i]! }));
  return (pathname) => {
    for (const { pattern, route } of patterns) {
      const found = pattern.exec(pathname);
      if (found) return { route, params: { ...found.groups } };
    }
    return undefined;
  };
}
