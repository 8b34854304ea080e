import { BoundedMap } from "./_bounded-map.js";
import type { PageQuery, PetStore } from "./ports.js";
import type { Pet, PetStatus } from "./schemas.js";

/** Pages of pets kept at once (each query shape is one); past this many, the oldest is forgotten. */
const PAGES_KEPT = 1_000;

/**
 * Rows of one page. `kept`: the same page is handed out again while the store's pets are
 * unchanged, so its answer's JSON is made once and kept with it, in `json`.
 */
export interface Page<T> {
  rows: readonly T[];
  kept: boolean;
  json?: string;
}

/** Pages of the pet list, as the list handler asks for them. */
export interface PetPages {
  list(query: PageQuery<PetStatus>): Promise<Page<Pet>>;
}

/**
 * Pages of pets kept while the store's pets are unchanged, for a store that can tell when
 * they last changed (`PetStore.petsVersion`): the list every client polls then costs one
 * version read instead of a page, and is serialised once. The version is read before the
 * page, so a page is never kept under a version newer than it. Without `petsVersion` every
 * page is read from the store, and none is kept.
 */
export function petPages(store: PetStore): PetPages {
  if (store.petsVersion === undefined)
    return { list: async (query) => ({ rows: await store.listPets(query), kept: false }) };
  const pages = new BoundedMap<string | number, { version: number; page: Page<Pet> }>(PAGES_KEPT);

  return {
    async list(query) {
      const version = await store.petsVersion!();
      // The first page, which every client polls, by its size alone: no key to build.
      const key =
        query.status === undefined && query.afterId === undefined
          ? query.limit
          : `${query.status}/${query.afterId}/${query.limit}`;
      const kept = pages.get(key);
      if (kept?.version === version) return kept.page;
      const page = { rows: Object.freeze(await store.listPets(query)), kept: true };
      pages.set(key, { version, page });
      return page;
    },
  };
}
