import { describe, expect, it } from "vitest";
import { createPet } from "../handlers/create-pet.js";
import { getPet } from "../handlers/get-pet.js";
import { listOrders } from "../handlers/list-orders.js";
import { listPets } from "../handlers/list-pets.js";
import { route, routeFinder } from "./route.js";

const finder = routeFinder("/v1");
const find = async (pathname: string) => finder(new Request(`http://petstore.test${pathname}`), pathname);

describe("routeFinder", () => {
  it("finds each operation's route and copies its path parameters", async () => {
    expect(await find("/v1/pets")).toMatchObject({ route: { path: "/pets" }, params: {} });
    expect(await find("/v1/pets/")).toMatchObject({ route: { path: "/pets" } });
    expect(await find("/v1/pets/42")).toMatchObject({ route: { path: "/pets/:petId" }, params: { petId: "42" } });
    expect(await find("/v1/store/orders")).toMatchObject({ route: { path: "/store/orders" } });
  });

  it("finds nothing outside the operations' paths or the base path", async () => {
    for (const path of ["/v1/pets/42/x", "/v1/nothing", "/v1", "/pets", "/v2/pets"]) expect(await find(path), path).toBeUndefined();
  });

  it("serves /openapi.json under the base path exactly, as a public route", async () => {
    const match = await find("/v1/openapi.json");
    expect(match?.route).toMatchObject({ path: "/openapi.json", public: true });
    expect(await find("/v1/openapi.json/")).toBeUndefined();
    expect((await routeFinder("/api")(new Request("http://petstore.test/api/openapi.json"), "/api/openapi.json"))?.route.path).toBe("/openapi.json");
  });

  it("gives the same answer for a path after many other paths were asked", async () => {
    expect((await find("/v1/pets/7"))?.params).toEqual({ petId: "7" });
    for (let id = 0; id < 1_500; id++) await find(`/v1/pets/${id}/x`);
    expect((await find("/v1/pets/7"))?.params).toEqual({ petId: "7" });
    expect(await find("/v1/pets/7/x")).toBeUndefined();
  });

  it("hands out path parameters nobody can change for the next request of the same path", async () => {
    const params = (await find("/v1/pets/42"))!.params as Record<string, string>;
    expect(() => {
      params.petId = "43";
    }).toThrow(TypeError);
    expect((await find("/v1/pets/42"))?.params).toEqual({ petId: "42" });
  });
});

describe("route", () => {
  it("picks the handler of the method, and the GET handler for HEAD", async () => {
    expect(route(await find("/v1/pets"), "GET", "/v1/pets")).toEqual({ handler: listPets, params: expect.any(Object) });
    expect(route(await find("/v1/pets"), "POST", "/v1/pets")).toEqual({ handler: createPet, params: expect.any(Object) });
    expect(route(await find("/v1/pets/1"), "HEAD", "/v1/pets/1")).toEqual({ handler: getPet, params: { petId: "1" } });
    expect(route(await find("/v1/store/orders"), "GET", "/v1/store/orders")).toEqual({ handler: listOrders, params: expect.any(Object) });
  });

  it("answers 404 not_found for a path no route serves", () => {
    expect(() => route(undefined, "GET", "/v1/cats")).toThrow(expect.objectContaining({ status: 404, code: "not_found", message: "No resource at /v1/cats" }));
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
      expect(() => route(match, method, path), `${method} ${path}`).toThrow(expect.objectContaining({ status: 405, code: "method_not_allowed", headers: { Allow: allow } }));
    }
  });
});
