import { describe, expect, it } from "vitest";
import { ROUTES, routeMatcher } from "./routes.js";

const pets = ROUTES.find((route) => route.path === "/pets")!;
const pet = ROUTES.find((route) => route.path === "/pets/:petId")!;

describe("routeMatcher", () => {
  it("finds the route and parameters of a path, the same from memory the second time", async () => {
    const routeOf = routeMatcher("/v1");
    for (let round = 0; round < 2; round++) {
      expect(await routeOf("/v1/pets")).toEqual({ route: pets, params: {} });
      expect(await routeOf("/v1/pets/")).toEqual({ route: pets, params: {} });
      expect(await routeOf("/v1/pets/42")).toEqual({ route: pet, params: { petId: "42" } });
      expect(await routeOf("/v1/pets/42/x")).toBeUndefined();
      expect(await routeOf("/v1/nothing")).toBeUndefined();
      expect(await routeOf("/pets")).toBeUndefined();
    }
    // Remembered answers are shared between requests: nobody may change them.
    expect(Object.isFrozen((await routeOf("/v1/pets/42"))!.params)).toBe(true);
  });

  it("remembers at most 1,000 paths, forgetting the oldest first", async () => {
    const routeOf = routeMatcher("/v1");
    await routeOf("/v1/pets/1");
    expect(routeOf("/v1/pets/1")).not.toBeInstanceOf(Promise);
    for (let id = 2; id <= 1_000; id++) await routeOf(`/v1/pets/${id}`);
    expect(routeOf("/v1/pets/1")).not.toBeInstanceOf(Promise);
    await routeOf("/v1/pets/1001");
    // The first path was forgotten: itty-router is asked again.
    expect(routeOf("/v1/pets/1")).toBeInstanceOf(Promise);
    expect(routeOf("/v1/pets/1001")).not.toBeInstanceOf(Promise);
  });
});
