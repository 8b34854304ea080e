import type { Order, OrderStatus, Pet, PetStatus } from "@petstore/core";
import type { Row } from "./engine.js";

// Rows of the SQL adapters' tables (the same columns in SQLite and Postgres) as core's records.

export const PET_COLUMNS = "id, name, category_id, status";

export function toPet(row: Row): Pet {
  const pet: Pet = { id: Number(row.id), name: String(row.name), categoryId: Number(row.category_id) };
  // An absent status stays absent (no key at all), as the contract says.
  if (row.status !== null) pet.status = row.status as PetStatus;
  return pet;
}

/** `complete` arrives as 0 or 1. */
export function toOrder(row: Row): Order {
  const order: Order = {
    id: Number(row.id),
    petId: Number(row.pet_id),
    quantity: Number(row.quantity),
    status: row.status as OrderStatus,
    complete: Number(row.complete) === 1,
  };
  if (row.ship_date !== null) order.shipDate = String(row.ship_date);
  return order;
}
