import type { ApiKeyRecord, Order, OrderStatus, Pet, PetStatus, PlanName } from "@petstore/core";
import type { Row, Value } from "./engine.js";

// Rows of the SQL adapters' tables (the same columns in SQLite and Postgres) as core's records.

export const PET_COLUMNS = "id, name, category_id, status";
export const KEY_COLUMNS = "id, hash, plan, per_minute, per_day, label, created_at, revoked_at";

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

export function toKeyRecord(row: Row): ApiKeyRecord {
  const record: ApiKeyRecord = { id: String(row.id), hash: String(row.hash), plan: row.plan as PlanName, createdAt: Number(row.created_at) };
  if (row.per_minute !== null) record.perMinute = Number(row.per_minute);
  if (row.per_day !== null) record.perDay = Number(row.per_day);
  if (row.label !== null) record.label = String(row.label);
  if (row.revoked_at !== null) record.revokedAt = Number(row.revoked_at);
  return record;
}

/** The values of a key record in the order of KEY_COLUMNS. */
export function keyRecordValues(record: ApiKeyRecord): Value[] {
  return [record.id, record.hash, record.plan, record.perMinute ?? null, record.perDay ?? null, record.label ?? null, record.createdAt, record.revokedAt ?? null];
}
