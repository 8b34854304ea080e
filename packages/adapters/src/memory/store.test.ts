import { describe, expect, it } from "vitest";
import { memoryStore } from "./store.js";

describe("memoryStore", () => {
  it("tells a petsVersion unchanged by reads and moved by every create", async () => {
    const store = memoryStore({ seed: { pets: [{ name: "Rex", categoryId: 1 }] } });
    const before = await store.petsVersion!();
    expect(typeof before).toBe("number");
    await store.listPets({ limit: 21 });
    expect(await store.petsVersion!()).toBe(before);
    await store.createPet({ name: "Fido", categoryId: 1 });
    expect(await store.petsVersion!()).not.toBe(before);
    expect((await store.listPets({ limit: 21 })).map((pet) => pet.name)).toEqual(["Rex", "Fido"]);
  });
});
