import { describe, expect, it } from "vitest";
import { findRouteStage } from "./find-route.js";

const finder = findRouteStage({ basePath: "/v1" });
const find = (pathname: string) => finder(pathname);

describe("findRouteStage", () => {
  it("finds each operation's route and copies its path parameters", async () => {
    expect(await find("/v1/pets")).toMatchObject({ route: { path: "/pets" }, params: {} });
    expect(await find("/v1/pets/")).toMatchObject({ route: { path: "/pets" } });
    expect(await find("/v1/pets/42")).toMatchObject({ route: { path: "/pets/:petId" }, params: { petId: "42" } });
    expect(await find("/v1/store/orders")).toMatchObject({ route: { path: "/store/orders" } });
  });

  it("finds nothing outside the operations' paths or the base path", async () => {
    for (const path of ["/v1/pets/42/x", "/v1/nothing", "/v1", "/pets", "/v2/pets"])
      expect(await find(path), path).toBeUndefined();
  });

  it("serves /openapi.json under the base path, as a public route, a trailing slash as every route", async () => {
    const match = await find("/v1/openapi.json");
    expect(match?.route).toMatchObject({ path: "/openapi.json", public: true });
    expect((await find("/v1/pets/"))?.route.path).toBe("/pets");
    expect((await find("/v1/openapi.json/"))?.route.path).toBe("/openapi.json");
    expect(await find("/v1/openapi.jsonx")).toBeUndefined();
    expect((await findRouteStage({ basePath: "/api" })("/api/openapi.json"))?.route.path).toBe("/openapi.json");
  });

  it("hands each request its own path parameters: a change to one reaches no other", () => {
    const params = find("/v1/pets/42")!.params as Record<string, string>;
    params.petId = "43";
    expect(find("/v1/pets/42")?.params).toEqual({ petId: "42" });
  });

  it("finds routes under the root when mounted at the root", () => {
    const atRoot = findRouteStage({ basePath: "" });
    expect(atRoot("/pets/7")).toMatchObject({ route: { path: "/pets/:petId" }, params: { petId: "7" } });
    expect(atRoot("/v1/pets")).toBeUndefined();
  });
});
