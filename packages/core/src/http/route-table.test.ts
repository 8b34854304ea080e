import { describe, expect, it } from "vitest";
import { ROUTES } from "../routes.js";
import { routeTable, servedBy } from "./route-table.js";

const find = routeTable(ROUTES, "/v1");

describe("routeTable", () => {
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
    expect(routeTable(ROUTES, "/api")("/api/openapi.json")?.route.path).toBe("/openapi.json");
  });

  it("hands each request its own path parameters: a change to one reaches no other", () => {
    const params = find("/v1/pets/42")!.params as Record<string, string>;
    params.petId = "43";
    expect(find("/v1/pets/42")?.params).toEqual({ petId: "42" });
  });

  it("finds routes under the root when mounted at the root", () => {
    const atRoot = routeTable(ROUTES, "");
    expect(atRoot("/pets/7")).toMatchObject({ route: { path: "/pets/:petId" }, params: { petId: "7" } });
    expect(atRoot("/v1/pets")).toBeUndefined();
  });

  it("names a table's own parameters: the admin API's /keys/:id/roll gives id", () => {
    const admin = routeTable([{ path: "/keys/:id/roll", methods: { POST: "roll" } }], "/admin/v1");
    expect(admin("/admin/v1/keys/key_abc/roll")?.params).toEqual({ id: "key_abc" });
    expect(admin("/admin/v1/keys/key_abc")).toBeUndefined();
  });
});

describe("servedBy", () => {
  const table = [
    { path: "/keys", methods: { GET: "list", POST: "create" } },
    { path: "/keys/:id/roll", methods: { POST: "roll" } },
  ];
  const find = routeTable(table, "/admin/v1");

  it("gives what serves the method, and the GET's for a HEAD", () => {
    expect(servedBy(find("/admin/v1/keys"), "POST", "/admin/v1/keys")).toEqual({ method: "POST", serves: "create" });
    expect(servedBy(find("/admin/v1/keys"), "HEAD", "/admin/v1/keys")).toEqual({ method: "GET", serves: "list" });
  });

  it("answers 404 not_found where no route serves the path", () => {
    expect(() => servedBy(find("/admin/v1/cats"), "GET", "/admin/v1/cats")).toThrow(
      expect.objectContaining({ status: 404, code: "not_found", message: "No resource at /admin/v1/cats" }),
    );
  });

  it("answers 405 with Allow, sorted, HEAD only where GET is served", () => {
    expect(() => servedBy(find("/admin/v1/keys"), "DELETE", "/admin/v1/keys")).toThrow(
      expect.objectContaining({
        status: 405,
        message: "DELETE is not allowed on /admin/v1/keys",
        headers: { Allow: "GET, HEAD, POST" },
      }),
    );
    expect(() => servedBy(find("/admin/v1/keys/k/roll"), "GET", "/admin/v1/keys/k/roll")).toThrow(
      expect.objectContaining({ status: 405, headers: { Allow: "POST" } }),
    );
  });

  it("finds no method on Object.prototype", () => {
    expect(() => servedBy(find("/admin/v1/keys"), "valueOf", "/admin/v1/keys")).toThrow(
      expect.objectContaining({ status: 405 }),
    );
  });
});
