import type { Handler } from "./context.js";
import type { Match } from "./http/route-table.js";
import type { Scope } from "./ports.js";
import { createPet } from "./handlers/create-pet.js";
import { getOpenApi } from "./handlers/get-openapi.js";
import { getPet } from "./handlers/get-pet.js";
import { listOrders } from "./handlers/list-orders.js";
import { listPets } from "./handlers/list-pets.js";

/** One path of the API and the handler of each method; every `GET` also answers `HEAD`. */
export interface Route {
  /** itty-router pattern under the base path. */
  path: string;
  methods: Partial<Record<"GET" | "POST", Handler>>;
  /** The scope each method needs of the caller's key (a `HEAD` the one of `GET`); none on a public route. */
  scopes?: Partial<Record<"GET" | "POST", Scope>>;
  /** Served without an API key (still rate-limited). */
  public?: true;
}

/** The route of the API serving a path, and its parameters. */
export type RouteMatch = Match<Route>;

/** The operations of the API, by path, and the document that describes them. */
export const ROUTES: readonly Route[] = [
  { path: "/pets", methods: { GET: listPets, POST: createPet }, scopes: { GET: "pets:read", POST: "pets:write" } },
  { path: "/pets/:petId", methods: { GET: getPet }, scopes: { GET: "pets:read" } },
  { path: "/store/orders", methods: { GET: listOrders }, scopes: { GET: "orders:read" } },
  { path: "/openapi.json", methods: { GET: getOpenApi }, public: true },
];
