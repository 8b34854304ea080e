import type { Handler } from "./context.js";
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
  /** Served without an API key (still rate-limited). */
  public?: true;
}

/** The operations of the API, by path, and the document that describes them. */
export const ROUTES: readonly Route[] = [
  { path: "/pets", methods: { GET: listPets, POST: createPet } },
  { path: "/pets/:petId", methods: { GET: getPet } },
  { path: "/store/orders", methods: { GET: listOrders } },
  { path: "/openapi.json", methods: { GET: getOpenApi }, public: true },
];
