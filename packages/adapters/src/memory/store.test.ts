import { describe, expect, it } from "vitest";
import { memoryStore } from "./store.js";

describe("memoryStore", () => {
  it("hands out the same frozen page until a pet is created (core serialises it once)", async () => {
    const store = memoryStore();
    await store.createPet({ name: "Rex", categoryId: 1 });
    const page = await store.listPets({ limit: 21 });
    expect(Object.isFrozen(page) && page.every(Object.isFrozen)).toBe(true);
    expect(await store.listPets({ limit: 21 })).toBe(page);
    await store.createPet({ name: "Fido", categoryId: 1 });
    expect((await store.listPets({ limit: 21 })).map((pet) => pet.name)).toEqual(["Rex", "Fido"]);
  });
});
