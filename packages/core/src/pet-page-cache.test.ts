import { memoryStore } from "@petstore/adapters/memory";
import { describe, expect, it, vi } from "vitest";
import { petPages } from "./pet-page-cache.js";
import type { PetStore } from "./ports.js";

describe("petPages", () => {
  it("hands out the same frozen, kept page while the store's petsVersion stays put, and reads again once it moves", async () => {
    const store = memoryStore();
    const listPets = vi.spyOn(store, "listPets");
    const pages = petPages(store);
    await store.createPet({ name: "Rex", categoryId: 1 });
    const page = await pages.list({ limit: 21 });
    expect([Object.isFrozen(page.rows), page.kept]).toEqual([true, true]);
    expect(await pages.list({ limit: 21 })).toBe(page);
    expect(listPets).toHaveBeenCalledTimes(1);
    // Another query shape is another page.
    expect((await pages.list({ limit: 21, status: "sold" })).rows).toEqual([]);
    expect(listPets).toHaveBeenCalledTimes(2);
    await store.createPet({ name: "Fido", categoryId: 1 });
    expect((await pages.list({ limit: 21 })).rows.map((pet) => pet.name)).toEqual(["Rex", "Fido"]);
    expect(listPets).toHaveBeenCalledTimes(3);
  });

  it("never keeps a page under a version older than the page: the version is read first", async () => {
    let version = 1;
    const names = ["Rex"];
    const pages = petPages({
      ...memoryStore(),
      petsVersion: async () => version,
      listPets: async () => {
        // A change lands between the version read and the page read.
        names.push("Fido");
        version = 2;
        return names.map((name, i) => ({ id: i + 1, name, categoryId: 1 }));
      },
    });
    expect((await pages.list({ limit: 5 })).rows.map((pet) => pet.name)).toEqual(["Rex", "Fido"]);
    // Kept under version 1, which is gone: read again.
    expect((await pages.list({ limit: 5 })).rows.map((pet) => pet.name)).toEqual(["Rex", "Fido", "Fido"]);
  });

  it("reads every page from a store without petsVersion, and keeps none", async () => {
    const { petsVersion: _, ...rest } = memoryStore();
    const store: PetStore = rest;
    const listPets = vi.spyOn(store, "listPets");
    expect((await petPages(store).list({ limit: 5 })).kept).toBe(false);
    await petPages(store).list({ limit: 5 });
    expect(listPets).toHaveBeenCalledTimes(2);
  });
});
