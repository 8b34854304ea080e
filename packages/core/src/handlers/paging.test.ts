import { memoryAdapters } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import type { Context } from "../context.js";
import { GET_PET_DEPRECATED_AT, GET_PET_SUNSET_AT } from "../context.js";
import type { Pet, PetStore } from "../index.js";
import { petPages } from "../pet-page-cache.js";
import { listPets } from "./list-pets.js";

/** A pet whose name counts how often it is read, i.e. serialised. */
function countingPet(id: number, reads: { count: number }): Pet {
  return Object.freeze({
    id,
    categoryId: 1,
    get name() {
      reads.count++;
      return `Pet ${id}`;
    },
  }) as Pet;
}

/** A context whose store lists `listPetsRows()`; with `version`, through core's page cache. */
function contextWith(listPetsRows: () => Pet[], version?: () => number): Context {
  const inner: PetStore = { ...memoryAdapters().store, listPets: async () => listPetsRows() };
  if (version) inner.petsVersion = async () => version();
  else delete inner.petsVersion;
  return {
    store: inner,
    petPages: petPages(inner),
    idempotency: memoryAdapters().idempotency,
    params: {},
    now: 0,
    basePath: "/v1",
    deprecation: { deprecatedAt: GET_PET_DEPRECATED_AT, sunsetAt: GET_PET_SUNSET_AT },
    headers: { shared: new Headers({ "Content-Type": "application/json" }), own: {} },
    bodyTimeoutMs: 30_000,
  };
}

const get = (query = "") => new Request(`http://petstore.test/v1/pets${query}`);

describe("pages of pets", () => {
  it("are serialised once per page size while the store's petsVersion stays put, however often they are served", async () => {
    const reads = { count: 0 };
    const rows = [countingPet(1, reads), countingPet(2, reads), countingPet(3, reads)];
    const ctx = contextWith(
      () => rows,
      () => 1,
    );
    const first = await (await listPets(get(), ctx)).json();
    expect(await (await listPets(get(), ctx)).json()).toEqual(first);
    expect(reads.count).toBe(3);
    // Another page size of the same list is another body, with its own Link.
    const paged = await listPets(get("?limit=2"), ctx);
    expect(await paged.json()).toEqual([
      { id: 1, categoryId: 1, name: "Pet 1" },
      { id: 2, categoryId: 1, name: "Pet 2" },
    ]);
    expect(paged.headers.get("link")).toContain("limit=2");
    expect(reads.count).toBe(5);
  });

  it("are serialised for every answer from a store without petsVersion: it may change a list in place", async () => {
    const reads = { count: 0 };
    const rows = [countingPet(1, reads)];
    const ctx = contextWith(() => rows);
    await (await listPets(get(), ctx)).json();
    rows.push(countingPet(2, reads));
    expect(await (await listPets(get(), ctx)).json()).toHaveLength(2);
    expect(reads.count).toBe(3);
  });
});
