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
