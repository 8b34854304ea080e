import * as v from "valibot";
import { expect, it } from "vitest";
import { type Closable, describeWithFixture } from "./_fixture.js";
import type { IdempotencyStore, PageQuery, PetStore } from "../ports.js";
import { MAX_ID, type NewOrderInput, NewOrderSchema, type NewPet, type Pet } from "../schemas.js";

/** A fresh, empty store and the idempotency store whose claims it completes. */
export interface StoreFixture extends Closable {
  store: PetStore;
  idempotency: IdempotencyStore;
}

/**
 * Makes a fresh store whose records age by `clock` (Unix ms), or by the store's own clock when
 * `clock` is undefined: pass it to the adapters' `clock` option.
 */
export type MakeStore = (clock: (() => number) | undefined) => Promise<StoreFixture>;

const rex: NewPet = { name: "Rex", categoryId: 1, status: "available" };

/** The orders the library's storage API writes: NewOrderSchema applies the defaults. */
const order = (input: NewOrderInput) => v.parse(NewOrderSchema, input);

/** `list` filtered by `status` pages among the rows `made` of that status: the first `limit`, then all after the one before the last of those. */
async function expectPagesOfStatus<S extends string, T extends { id: number; status?: S | undefined }>(
  list: (query: PageQuery<S>) => Promise<T[]>,
  made: T[],
  status: NoInfer<S>,
  limit: number,
) {
  const ofStatus = made.filter((row) => row.status === status);
  expect(await list({ limit, status })).toEqual(ofStatus.slice(0, limit));
  expect(await list({ limit: 10, status, afterId: ofStatus[limit - 2]!.id })).toEqual(ofStatus.slice(limit - 1));
}

/** Creates pets one after another (not concurrently), so their ids follow their order. */
async function createAll(store: PetStore, pets: NewPet[]): Promise<Pet[]> {
  const created: Pet[] = [];
  for (const pet of pets) created.push(await store.createPet(pet));
  return created;
}

/**
 * The `PetStore` contract: ids unique, increasing and never reused; paging by `afterId`,
 * `limit` and `status`, ordered by id; absent fields stay absent; orders round-trip.
 * @example petStoreContract("memory", async (clock) => memoryAdapters({ clock }));
 */
export function petStoreContract(name: string, make: MakeStore): void {
  describeWithFixture(
    `PetStore contract: ${name}`,
    () => make(undefined),
    (fixture) => {
      it("returns the created pet with a new id and the fields it was given", async () => {
        const pet = await fixture.store.createPet(rex);
        expect(pet).toEqual({ id: pet.id, ...rex });
        expect(Number.isSafeInteger(pet.id) && pet.id >= 1).toBe(true);
      });

      it("moves petsVersion, when it has one, with every create (also one with a claim)", async () => {
        const versionOf = fixture.store.petsVersion?.bind(fixture.store);
        if (versionOf === undefined) return;
        const before = await versionOf();
        expect(await versionOf()).toBe(before);
        await fixture.store.createPet(rex);
        const afterCreate = await versionOf();
        expect(afterCreate).not.toBe(before);
        const claim = { scope: "key_v", key: "v-1", fingerprint: "f".repeat(64) };
        expect(await fixture.idempotency.claim(claim)).toEqual({ state: "claimed" });
        expect(await fixture.store.createClaimedPet(rex, claim)).toMatchObject({ state: "created" });
        expect(await versionOf()).not.toBe(afterCreate);
      });

      it("finds a created pet by its id", async () => {
        const pet = await fixture.store.createPet(rex);
        expect(await fixture.store.getPet(pet.id)).toEqual(pet);
      });

      it("assigns ids that increase with every create", async () => {
        const pets = await createAll(
          fixture.store,
          Array.from({ length: 5 }, (_, i) => ({ name: `Pet ${i}`, categoryId: 1 })),
        );
        const ids = pets.map((pet) => pet.id);
        expect(ids).toEqual([...ids].sort((a, b) => a - b));
        expect(new Set(ids).size).toBe(ids.length);
      });

      it("assigns distinct ids to concurrent creates", async () => {
        const pets = await Promise.all(
          Array.from({ length: 20 }, (_, i) => fixture.store.createPet({ name: `Pet ${i}`, categoryId: 2 })),
        );
        expect(new Set(pets.map((pet) => pet.id)).size).toBe(20);
        for (const pet of pets) expect(await fixture.store.getPet(pet.id)).toEqual(pet);
      });

      it("never gives a new pet an id already used, even one of an earlier page", async () => {
        const first = await createAll(fixture.store, [rex, rex, rex]);
        const later = await fixture.store.createPet(rex);
        expect(later.id).toBeGreaterThan(Math.max(...first.map((pet) => pet.id)));
        expect(await fixture.store.getPet(first[0]!.id)).toEqual(first[0]);
      });

      it("leaves status absent, with no key at all, when it was not given", async () => {
        const pet = await fixture.store.createPet({ name: "Tom", categoryId: 3 });
        expect("status" in pet).toBe(false);
        expect(Object.keys((await fixture.store.getPet(pet.id))!).sort()).toEqual(["categoryId", "id", "name"]);
        const [listed] = await fixture.store.listPets({ limit: 10 });
        expect(Object.keys(listed!).sort()).toEqual(["categoryId", "id", "name"]);
      });

      it("keeps every status, a 100-character Unicode name and the largest categoryId exactly", async () => {
        const name = "🐕 Ñandú ".repeat(10).slice(0, 100);
        const pets = await createAll(fixture.store, [
          { name, categoryId: MAX_ID, status: "available" },
          { name: "b", categoryId: 1, status: "pending" },
          { name: "c", categoryId: 1, status: "sold" },
        ]);
        for (const pet of pets) expect(await fixture.store.getPet(pet.id)).toEqual(pet);
        expect(pets[0]).toEqual({ id: pets[0]!.id, name, categoryId: MAX_ID, status: "available" });
        expect(typeof pets[0]!.id).toBe("number");
        expect(typeof pets[0]!.categoryId).toBe("number");
      });

      it("answers undefined for an id no pet has", async () => {
        const pet = await fixture.store.createPet(rex);
        expect(await fixture.store.getPet(pet.id + 1)).toBeUndefined();
        expect(await fixture.store.getPet(MAX_ID)).toBeUndefined();
      });

      it("lists nothing when there are no pets", async () => {
        expect(await fixture.store.listPets({ limit: 20 })).toEqual([]);
      });

      it("lists pets ordered by id, at most limit of them", async () => {
        const pets = await createAll(
          fixture.store,
          Array.from({ length: 7 }, (_, i) => ({ name: `Pet ${i}`, categoryId: 1 })),
        );
        expect(await fixture.store.listPets({ limit: 3 })).toEqual(pets.slice(0, 3));
        expect(await fixture.store.listPets({ limit: 100 })).toEqual(pets);
      });

      it("lists only pets with an id above afterId", async () => {
        const pets = await createAll(
          fixture.store,
          Array.from({ length: 6 }, (_, i) => ({ name: `Pet ${i}`, categoryId: 1 })),
        );
        expect(await fixture.store.listPets({ limit: 2, afterId: pets[1]!.id })).toEqual(pets.slice(2, 4));
        expect(await fixture.store.listPets({ limit: 10, afterId: pets[5]!.id })).toEqual([]);
      });

      it("pages through every pet exactly once by following the last id", async () => {
        const pets = await createAll(
          fixture.store,
          Array.from({ length: 11 }, (_, i) => ({ name: `Pet ${i}`, categoryId: 1 })),
        );
        const seen: Pet[] = [];
        let page = await fixture.store.listPets({ limit: 4 });
        while (page.length > 0) {
          seen.push(...page);
          page = await fixture.store.listPets({ limit: 4, afterId: page[page.length - 1]!.id });
        }
        expect(seen).toEqual(pets);
      });

      it("filters by status before applying the limit", async () => {
        const statuses = ["sold", "available", "sold", "pending", "sold", undefined, "sold"] as const;
        const pets = await createAll(
          fixture.store,
          statuses.map((status, i) =>
            status ? { name: `Pet ${i}`, categoryId: 1, status } : { name: `Pet ${i}`, categoryId: 1 },
          ),
        );
        await expectPagesOfStatus(fixture.store.listPets.bind(fixture.store), pets, "sold", 3);
        expect(await fixture.store.listPets({ limit: 10, status: "pending" })).toEqual([pets[3]]);
      });

      it("creates an order with the defaults of NewOrderSchema: placed, not complete, no shipDate", async () => {
        const pet = await fixture.store.createPet(rex);
        const created = await fixture.store.createOrder(order({ petId: pet.id, quantity: 2 }));
        expect(created).toEqual({ id: created.id, petId: pet.id, quantity: 2, status: "placed", complete: false });
        expect("shipDate" in created).toBe(false);
        const [listed] = await fixture.store.listOrders({ limit: 10 });
        expect(listed).toEqual(created);
        expect("shipDate" in listed!).toBe(false);
      });

      it("keeps every field of an order exactly", async () => {
        const input = order({
          petId: MAX_ID,
          quantity: 1_000_000,
          shipDate: "2030-01-15T12:00:00.000Z",
          status: "delivered",
          complete: true,
        });
        const created = await fixture.store.createOrder(input);
        expect(created).toEqual({ id: created.id, ...input });
        expect(await fixture.store.listOrders({ limit: 10 })).toEqual([created]);
      });

      it("assigns increasing order ids and pages orders by afterId, limit and status", async () => {
        const statuses = ["placed", "approved", "placed", "delivered", "placed"] as const;
        const orders = [];
        for (const [i, status] of statuses.entries())
          orders.push(await fixture.store.createOrder(order({ petId: 1, quantity: i + 1, status })));
        const ids = orders.map((o) => o.id);
        expect(ids).toEqual([...ids].sort((a, b) => a - b));
        expect(new Set(ids).size).toBe(ids.length);
        expect(await fixture.store.listOrders({ limit: 2 })).toEqual(orders.slice(0, 2));
        expect(await fixture.store.listOrders({ limit: 2, afterId: orders[1]!.id })).toEqual(orders.slice(2, 4));
        await expectPagesOfStatus(fixture.store.listOrders.bind(fixture.store), orders, "placed", 2);
        expect(await fixture.store.listOrders({ limit: 10, status: "approved" })).toEqual([orders[1]]);
      });

      it("keeps pets and orders apart", async () => {
        await fixture.store.createOrder(order({ petId: 1, quantity: 1 }));
        expect(await fixture.store.listPets({ limit: 10 })).toEqual([]);
        const pet = await fixture.store.createPet(rex);
        expect(await fixture.store.listOrders({ limit: 10 })).toHaveLength(1);
        expect(await fixture.store.listPets({ limit: 10 })).toEqual([pet]);
      });
    },
  );
}
