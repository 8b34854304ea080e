import { Router } from "itty-router";
import { BoundedMap } from "../_bounded-map.js";
import type { Settings } from "../options.js";
import { type Route, ROUTES } from "../routes.js";

/** A route and the path parameters found in a path. */
export interface RouteMatch {
  route: Route;
  /** Shared by every request of the same path: frozen. */
  params: Readonly<Record<string, string>>;
}

/** Paths whose match is remembered; past this many, the oldest is forgotten. */
const PATHS_KEPT = 1_000;

/**
 * Before the stages, find the route: the route of `ROUTES` (the table) serving a request's
 * path under `basePath`; looked up once, whatever the answer will
 * be (the last stage reports it). itty-router matches the patterns: a `Router` with the base,
 * asked with the request itself. Its answer for a path is kept (for the latest 1,000 paths):
 * asking itty-router parses the URL and its query and tries each pattern, for an answer that
 * depends on the path alone; without the kept answers a GET of the pets in process took 40%
 * longer (11.5 against 16.2 µs, memory adapters, Bun, interleaved runs; issue 31).
 */
export function findRouteStage(settings: Pick<Settings, "basePath">): (request: Request, pathname: string) => Promise<RouteMatch | undefined> {
  const router = Router({ base: settings.basePath });
  // Every route takes every method here: `chooseHandler` picks the handler by method.
  for (const route of ROUTES) router.all(route.path, ({ params }) => ({ route, params: Object.freeze({ ...params }) }));
  const matches = new BoundedMap<string, RouteMatch | undefined>(PATHS_KEPT);
  return async (request, pathname) => {
    if (matches.has(pathname)) return matches.get(pathname);
    const found: RouteMatch | undefined = await router.fetch(request);
    matches.set(pathname, found);
    return found;
  };
}
