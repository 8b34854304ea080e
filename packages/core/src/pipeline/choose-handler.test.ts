import { describe, expect, it } from "vitest";
import { createPet } from "../handlers/create-pet.js";
import { getPet } from "../handlers/get-pet.js";
import { listOrders } from "../handlers/list-orders.js";
import { listPets } from "../handlers/list-pets.js";
import { chooseHandler } from "./choose-handler.js";
import { routeTable } from "../http/route-table.js";
import { ROUTES } from "../routes.js";

const finder = routeTable(ROUTES, "/v1");
const find = async (pathname: string) => finder(pathname);

describe("chooseHandler", () => {
  it("picks the handler of the method and the scope it needs, and the GET handler for HEAD", async () => {
    expect(chooseHandler(await find("/v1/pets"), "GET", "/v1/pets")).toEqual({
      handler: listPets,
      params: expect.any(Object),
      scope: "pets:read",
    });
    expect(chooseHandler(await find("/v1/pets"), "POST", "/v1/pets")).toEqual({
      handler: createPet,
      params: expect.any(Object),
      scope: "pets:write",
    });
    expect(chooseHandler(await find("/v1/pets/1"), "HEAD", "/v1/pets/1")).toEqual({
      handler: getPet,
      params: { petId: "1" },
      scope: "pets:read",
    });
    expect(chooseHandler(await find("/v1/store/orders"), "GET", "/v1/store/orders")).toEqual({
      handler: listOrders,
      params: expect.any(Object),
      scope: "orders:read",
    });
  });

  it("needs no scope for the public document", async () => {
    expect(chooseHandler(await find("/v1/openapi.json"), "GET", "/v1/openapi.json")).not.toHaveProperty("scope");
  });

  it("answers 404 not_found for a path no route serves", () => {
    expect(() => chooseHandler(undefined, "GET", "/v1/cats")).toThrow(
      expect.objectContaining({ status: 404, code: "not_found", message: "No resource at /v1/cats" }),
    );
  });

  it("answers 405 with Allow listing the path's methods, HEAD wherever GET is served", async () => {
    for (const [path, method, allow] of [
      ["/v1/pets", "PUT", "GET, HEAD, POST"],
      ["/v1/pets/1", "POST", "GET, HEAD"],
      ["/v1/store/orders", "DELETE", "GET, HEAD"],
      ["/v1/openapi.json", "POST", "GET, HEAD"],
      // Not found on Object.prototype.
      ["/v1/pets", "valueOf", "GET, HEAD, POST"],
      ["/v1/pets", "constructor", "GET, HEAD, POST"],
    ] as const) {
      const match = await find(path);
      expect(() => chooseHandler(match, method, path), `${method} ${path}`).toThrow(
        expect.objectContaining({ status: 405, code: "method_not_allowed", headers: { Allow: allow } }),
      );
    }
  });
});
