import type { NewOrder, NewPet, Order, PageQuery, Pet, PetStore } from "@petstore/core";
import { MemoryIdempotencyStore } from "./idempotency.js";

export interface MemoryStoreOptions {
  /** Rows to start with; they get ids 1, 2, 3... in order. */
  seed?: { pets?: NewPet[]; orders?: NewOrder[] };
  /** The `memoryIdempotency()` whose claims this store completes (see `memoryAdapters`): that one only. */
  idempotency?: MemoryIdempotencyStore;
}

/** Rows with `id > afterId` (ids are ascending), filtered, at most `limit`. */
function page<T extends { id: number; status?: string | undefined }>(rows: T[], query: PageQuery<string>): T[] {
  let low = 0;
  let high = rows.length;
  const afterId = query.afterId ?? 0;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (rows[mid]!.id <= afterId) low = mid + 1;
    else high = mid;
  }
  const out: T[] = [];
  for (let i = low; i < rows.length && out.length < query.limit; i++) {
    const row = rows[i]!;
    if (query.status === undefined || row.status === query.status) out.push(row);
  }
  return out;
}

/**
 * Pets and orders in arrays ordered by id: for tests, demos and single-process use; nothing
 * survives a restart.
 * @example const store = memoryStore({ seed: { pets: [{ name: "Rex", categoryId: 1 }] } });
 */
export function memoryStore(options: MemoryStoreOptions = {}): PetStore {
  const claims = options.idempotency;
  if (claims !== undefined && !(claims instanceof MemoryIdempotencyStore))
    throw new TypeError(
      "memoryStore completes the claims of a memoryIdempotency() only: memoryAdapters() wires the two",
    );
  const pets: Pet[] = [];
  const orders: Order[] = [];
  /** Moves with every change to pets: core keeps pages of pets while it stays put. */
  let petsVersion = 0;

  const insertPet = (input: NewPet): Pet => {
    const pet: Pet = { id: pets.length + 1, name: input.name, categoryId: input.categoryId };
    if (input.status !== undefined) pet.status = input.status;
    pets.push(Object.freeze(pet));
    petsVersion++;
    return pet;
  };
  const insertOrder = (input: NewOrder): Order => {
    const order: Order = {
      id: orders.length + 1,
      petId: input.petId,
      quantity: input.quantity,
      status: input.status,
      complete: input.complete,
    };
    if (input.shipDate !== undefined) order.shipDate = input.shipDate;
    orders.push(order);
    return order;
  };
  options.seed?.pets?.forEach(insertPet);
  options.seed?.orders?.forEach(insertOrder);

  return {
    listPets: async (query) => page(pets, query),
    petsVersion: async () => petsVersion,
    getPet: async (id) => pets[id - 1],
    createPet: async (input) => insertPet(input),
    createClaimedPet: async (input, claim) => {
      if (!claims)
        throw new TypeError(
          "memoryStore needs the memoryIdempotency() that made this claim: memoryStore({ idempotency })",
        );
      // As in libSQL: a claim taken over after its lease ran out must not yield a second pet.
      if (!claims.holds(claim)) return { state: "claim_lost" };
      const pet = insertPet(input);
      // Same synchronous step as the insert: nothing can observe one without the other.
      claims.completeWithPet(claim, pet.id);
      return { state: "created", pet };
    },
    listOrders: async (query) => page(orders, query),
    createOrder: async (input) => insertOrder(input),
  };
}
