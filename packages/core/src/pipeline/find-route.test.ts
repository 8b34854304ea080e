import { describe, expect, it } from "vitest";
import { findRouteStage } from "./find-route.js";

const finder = findRouteStage({ basePath: "/v1" });
const find = async (pathname: string) => finder(new Request(`http://petstore.test${pathname}`), pathname);

describe("findRouteStage", () => {
  it("finds each operation's route and copies its path parameters", async () => {
    expect(await find("/v1/pets")).toMatchObject({ route: { path: "/pets" }, params: {} });
    expect(await find("/v1/pets/")).toMatchObject({ route: { path: "/pets" } });
    expect(await find("/v1/pets/42")).toMatchObject({ route: { path: "/pets/:petId" }, params: { petId: "42" } });
    expect(await find("/v1/store/orders")).toMatchObject({ route: { path: "/store/orders" } });
  });

  it("finds nothing outside the operations' paths or the base path", async () => {
    for (const path of ["/v1/pets/42/x", "/v1/nothing", "/v1", "/pets", "/v2/pets"]) expect(await find(path), path).toBeUndefined();
  });

  it("serves /openapi.json under the base path, as a public route, a trailing slash as every route", async () => {
    const match = await find("/v1/openapi.json");
    expect(match?.route).toMatchObject({ path: "/openapi.json", public: true });
    expect((await find("/v1/pets/"))?.route.path).toBe("/pets");
    expect((await find("/v1/openapi.json/"))?.route.path).toBe("/openapi.json");
    expect(await find("/v1/openapi.jsonx")).toBeUndefined();
    expect((await findRouteStage({ basePath: "/api" })(new Request("http://petstore.test/api/openapi.json"), "/api/openapi.json"))?.route.path).toBe("/openapi.json");
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
