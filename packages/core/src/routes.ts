import { IttyRouter } from "itty-router";
import type { Handler } from "./context.js";
import { createPet } from "./handlers/create-pet.js";
import { getPet } from "./handlers/get-pet.js";
import { listOrders } from "./handlers/list-orders.js";
import { listPets } from "./handlers/list-pets.js";

/** One path of the API and the handler of each method; every `GET` also answers `HEAD`. */
export interface Route {
  /** itty-router pattern under the base path. */
  path: string;
  methods: Partial<Record<"GET" | "POST", Handler>>;
}

/** Every authenticated route served under the base path (`/openapi.json` is served apart, without auth). */
export const ROUTES: readonly Route[] = [
  { path: "/pets", methods: { GET: listPets, POST: createPet } },
  { path: "/pets/:petId", methods: { GET: getPet } },
  { path: "/store/orders", methods: { GET: listOrders } },
];

/** The `Allow` header of a route: its methods, plus HEAD wherever GET is served. */
export function allowedMethods(route: Route): string {
  const methods = Object.keys(route.methods);
  if (route.methods.GET) methods.push("HEAD");
  return methods.sort().join(", ");
}

/** A route of `ROUTES` and the path parameters found in a path. */
export interface RouteMatch {
  route: Route;
  /** Shared by every request of the same path: frozen. */
  params: Readonly<Record<string, string>>;
}

/** Paths whose match is remembered; past this many, the oldest is forgotten. */
const MATCHES_KEPT = 1_000;

/**
 * The route serving a path under `basePath`, found by itty-router. Its answer for a path is
 * remembered (for the latest 1,000 paths): asking it parses the URL and its query and tries
 * each route's pattern, about a tenth of a GET's time in the server, for an answer that
 * depends on the path alone (every route takes every method; `createPetstore` picks the
 * handler by method).
 */
export function routeMatcher(basePath: string): (pathname: string) => RouteMatch | undefined | Promise<RouteMatch | undefined> {
  const router = IttyRouter({ base: basePath });
  for (const route of ROUTES) router.all(route.path, ({ params }) => ({ route, params: Object.freeze({ ...params }) }));
  const matches = new Map<string, RouteMatch | undefined>();
  return (pathname) => {
    if (matches.has(pathname)) return matches.get(pathname);
    // A pathname taken from a parsed URL parses back to itself, under any origin.
    return router.fetch({ method: "GET", url: `http://petstore.invalid${pathname}` }).then((found: RouteMatch | undefined) => {
      if (matches.size >= MATCHES_KEPT) matches.delete(matches.keys().next().value!);
      matches.set(pathname, found);
      return found;
    });
  };
}
