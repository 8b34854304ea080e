import type { PageQuery, PetStore } from "./ports.js";
import type { Pet, PetStatus } from "./schemas.js";

/** Pages of pets kept at once (each query shape is one); past this many, all are dropped. */
const PAGES_KEPT = 1_000;

/** The pages this cache hands out: they never change, so their JSON may be kept too. */
const cachedPages = new WeakSet<readonly object[]>();

/** True for a page `cachePetPages` handed out: the same array is never changed. */
export function isCachedPage(rows: readonly object[]): boolean {
  return cachedPages.has(rows);
}

/**
 * The store with `listPets` served from pages kept while its pets are unchanged, for a store
 * that can tell when they last changed (`PetStore.petsVersion`): the list every client polls
 * then costs one version read instead of a page, and is serialised once. The version is read
 * before the page, so a page is never kept under a version newer than it. A store without
 * `petsVersion` is returned as it is. `createPetstore` applies it to its store; exported for a
 * store used outside it (and an adapter's tests).
 */
export function cachePetPages(store: PetStore): PetStore {
  if (store.petsVersion === undefined) return store;
  const versionOf = () => store.petsVersion!();
  const pages = new Map<string | number, { version: number; pets: readonly Pet[] }>();

  async function listPets(query: PageQuery<PetStatus>): Promise<Pet[]> {
    const read = versionOf();
    // A version the store knows at once costs no await: this runs for every list.
    const version = typeof read === "number" ? read : await read;
    // The first page, which every client polls, by its size alone: no key to build.
    const key = query.status === undefined && query.afterId === undefined ? query.limit : `${query.status}/${query.afterId}/${query.limit}`;
    const kept = pages.get(key);
    if (kept?.version === version) return kept.pets as Pet[];
    const pets = Object.freeze(await store.listPets(query));
    cachedPages.add(pets);
    if (pages.size >= PAGES_KEPT) pages.clear();
    pages.set(key, { version, pets });
    // Frozen, so typed read-only by TypeScript: callers copy rather than change a page.
    return pets as Pet[];
  }

  // Delegated one by one rather than spread: a store may keep its methods on a prototype.
  return {
    listPets,
    getPet: (id) => store.getPet(id),
    createPet: (pet, claim) => store.createPet(pet, claim),
    listOrders: (query) => store.listOrders(query),
    createOrder: (order) => store.createOrder(order),
    petsVersion: versionOf,
  };
}
