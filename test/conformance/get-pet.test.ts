import { GET_PET_SUNSET_AT } from "@petstore/core";
import { describe, expect, it } from "vitest";
import { ADAPTER_KITS, beforeEachWorld, errorBody, openWorld, ROOMY_LIMITS, type World } from "./harness.js";

const DEPRECATION = "@1767225600";
const SUNSET = "Thu, 05 Dec 2030 00:00:00 GMT";

function expectDeprecationHeaders(response: Response) {
  expect(response.headers.get("deprecation")).toBe(DEPRECATION);
  expect(response.headers.get("sunset")).toBe(SUNSET);
  expect(response.headers.get("link")).toBe('</v1/pets>; rel="successor-version"');
}

describe.each(ADAPTER_KITS)("getPet (deprecated) on $name", (kit) => {
  let world: World;
  let key: string;
  beforeEachWorld(kit, ROOMY_LIMITS, (opened, freeKey) => ([world, key] = [opened, freeKey]));

  it("returns 200 with the pet and the deprecation headers", async () => {
    const pet = await world.createPet(key, { name: "Rex", categoryId: 2, status: "pending" });
    const response = await world.call("GET", `/v1/pets/${pet.id}`, { key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(pet);
    expectDeprecationHeaders(response);
  });

  it("returns 404 not_found with the deprecation headers when the pet does not exist", async () => {
    const response = await world.call("GET", "/v1/pets/42", { key });
    expectDeprecationHeaders(response);
    const body = await errorBody(response, 404, "not_found");
    expect(body.message).toContain("42");
  });

  it.each(["abc", "0", "-1", "1.5", "1e3", "9007199254740992", "99999999999999999999", " 1", "+1", "0x10"])(
    "returns 400 invalid_parameter with the deprecation headers when petId is '%s'",
    async (petId) => {
      const response = await world.call("GET", `/v1/pets/${encodeURIComponent(petId)}`, { key });
      expectDeprecationHeaders(response);
      const body = await errorBody(response, 400, "invalid_parameter");
      expect(body.message).toContain("petId");
    },
  );

  it("answers HEAD with the headers of GET and no body", async () => {
    const pet = await world.createPet(key);
    const response = await world.call("HEAD", `/v1/pets/${pet.id}`, { key });
    expect(response.status).toBe(200);
    expectDeprecationHeaders(response);
    expect(await response.text()).toBe("");
    const get = await world.call("GET", `/v1/pets/${pet.id}`, { key });
    expect(response.headers.get("content-length")).toBe(String((await get.arrayBuffer()).byteLength));
  });

  it("answers HEAD of a missing pet with the length of the 404's Error body", async () => {
    const response = await world.call("HEAD", "/v1/pets/999", { key });
    expect(response.status).toBe(404);
    const get = await world.call("GET", "/v1/pets/999", { key });
    expect(response.headers.get("content-length")).toBe(String((await get.arrayBuffer()).byteLength));
    expect(await response.text()).toBe("");
  });

  it("still answers one millisecond before the sunset instant", async () => {
    const pet = await world.createPet(key);
    world.clock.now = GET_PET_SUNSET_AT - 1;
    expect((await world.call("GET", `/v1/pets/${pet.id}`, { key })).status).toBe(200);
  });

  it("returns 410 gone with the deprecation headers from the sunset instant (1922659200) on", async () => {
    const pet = await world.createPet(key);
    expect(GET_PET_SUNSET_AT).toBe(1922659200_000);
    for (const now of [GET_PET_SUNSET_AT, GET_PET_SUNSET_AT + 86_400_000 * 400]) {
      world.clock.now = now;
      const response = await world.call("GET", `/v1/pets/${pet.id}`, { key });
      expectDeprecationHeaders(response);
      await errorBody(response, 410, "gone");
    }
    // GET /pets, its replacement, keeps working.
    expect((await world.call("GET", "/v1/pets", { key })).status).toBe(200);
  });

  it("takes its deprecation dates from configuration", async () => {
    const custom = await openWorld(kit, {
      deprecation: { deprecatedAt: Date.UTC(2027, 0, 1), sunsetAt: Date.UTC(2027, 5, 1) },
    });
    const customKey = await custom.key();
    custom.clock.now = Date.UTC(2027, 5, 1);
    const response = await custom.call("GET", "/v1/pets/1", { key: customKey });
    expect(response.headers.get("deprecation")).toBe(`@${Date.UTC(2027, 0, 1) / 1000}`);
    expect(response.headers.get("sunset")).toBe("Tue, 01 Jun 2027 00:00:00 GMT");
    expect(response.status).toBe(410);
    await custom.close();
  });

  it("does not put deprecation headers on other routes", async () => {
    const response = await world.call("GET", "/v1/pets", { key });
    expect(response.headers.get("deprecation")).toBeNull();
    expect(response.headers.get("sunset")).toBeNull();
  });
});
