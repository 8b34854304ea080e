import { memoryStore } from "@petstore/adapters/memory";
import { describe, expect, it, vi } from "vitest";
import { cachePetPages, isCachedPage } from "./pet-page-cache.js";
import type { PetStore } from "./ports.js";

describe("cachePetPages", () => {
  it("serves the same frozen page while the store's petsVersion stays put, and reads again once it moves", async () => {
    const inner = memoryStore();
    const listPets = vi.spyOn(inner, "listPets");
    const store = cachePetPages(inner);
    await store.createPet({ name: "Rex", categoryId: 1 });
    const page = await store.listPets({ limit: 21 });
    expect(Object.isFrozen(page) && isCachedPage(page)).toBe(true);
    expect(await store.listPets({ limit: 21 })).toBe(page);
    expect(listPets).toHaveBeenCalledTimes(1);
    // Another query shape is another page.
    expect(await store.listPets({ limit: 21, status: "sold" })).toEqual([]);
    expect(listPets).toHaveBeenCalledTimes(2);
    await store.createPet({ name: "Fido", categoryId: 1 });
    expect((await store.listPets({ limit: 21 })).map((pet) => pet.name)).toEqual(["Rex", "Fido"]);
    expect(listPets).toHaveBeenCalledTimes(3);
  });

  it("never keeps a page under a version older than the page: the version is read first", async () => {
    let version = 1;
    const names = ["Rex"];
    const store = cachePetPages({
      ...memoryStore(),
      petsVersion: async () => version,
      listPets: async () => {
        // A change lands between the version read and the page read.
        names.push("Fido");
        version = 2;
        return names.map((name, i) => ({ id: i + 1, name, categoryId: 1 }));
      },
    });
    expect((await store.listPets({ limit: 5 })).map((pet) => pet.name)).toEqual(["Rex", "Fido"]);
    // Kept under version 1, which is gone: read again.
    expect((await store.listPets({ limit: 5 })).map((pet) => pet.name)).toEqual(["Rex", "Fido", "Fido"]);
  });

  it("leaves a store without petsVersion as it is, and hands out no cached pages from it", async () => {
    const { petsVersion: _, ...rest } = memoryStore();
    const inner: PetStore = rest;
    expect(cachePetPages(inner)).toBe(inner);
    expect(isCachedPage(await inner.listPets({ limit: 5 }))).toBe(false);
  });
});
