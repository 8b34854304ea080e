import type { Client, Row } from "@libsql/client";
import {
  ApiError,
  type IdempotencyClaim,
  type NewOrder,
  type NewPet,
  type Order,
  type OrderStatus,
  type PageQuery,
  type Pet,
  type PetStatus,
  type PetStore,
} from "@petstore/core";
import { database } from "./_database.js";

const PET_COLUMNS = "id, name, category_id, status";
const ORDER_COLUMNS = "id, pet_id, quantity, ship_date, status, complete";

function toPet(row: Row): Pet {
  const pet: Pet = { id: Number(row.id), name: String(row.name), categoryId: Number(row.category_id) };
  // An absent status stays absent (no key at all), as the contract says.
  if (row.status !== null) pet.status = row.status as PetStatus;
  return pet;
}

function toOrder(row: Row): Order {
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

/** `SELECT` of one page: ids above `afterId`, ascending, optionally of one status. */
function pageStatement(table: string, columns: string, query: PageQuery<string>) {
  const byStatus = query.status === undefined ? "" : " AND status = ?";
  return {
    sql: `SELECT ${columns} FROM ${table} WHERE id > ?${byStatus} ORDER BY id LIMIT ?`,
    args: query.status === undefined ? [query.afterId ?? 0, query.limit] : [query.afterId ?? 0, query.status, query.limit],
  };
}

/**
 * Pets and orders in a libSQL database (run `migrate` first). Ids come from `AUTOINCREMENT`:
 * unique and never reused, also across processes sharing the database. A create with an
 * idempotency claim completes the claim in the same transaction as the insert.
 * @example const store = libsqlStore({ client: await connectLibsql({ url: "file:petstore.db" }) });
 */
export function libsqlStore(options: { client: Client }): PetStore {
  const db = database(options.client);

  async function createPet(pet: NewPet, claim?: IdempotencyClaim): Promise<Pet> {
    const values = [pet.name, pet.categoryId, pet.status ?? null];
    if (!claim) {
      const { rows } = await db.execute({
        sql: `INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING ${PET_COLUMNS}`,
        args: values,
      });
      return toPet(rows[0]!);
    }
    // Both statements run in one write transaction and share one condition: the claim is still
    // held (unfinished, same body). So the pet and its record commit together or not at all,
    // and a claim taken over after its lease ran out can never yield a second pet.
    const held = "scope = ? AND key = ? AND fingerprint = ? AND pet_id IS NULL";
    const claimArgs = [claim.scope, claim.key, claim.fingerprint];
    const [inserted] = await db.write([
      {
        sql: `INSERT INTO pets (name, category_id, status) SELECT ?, ?, ?
              WHERE EXISTS (SELECT 1 FROM idempotency_keys WHERE ${held}) RETURNING ${PET_COLUMNS}`,
        args: [...values, ...claimArgs],
      },
      { sql: `UPDATE idempotency_keys SET pet_id = last_insert_rowid() WHERE ${held}`, args: claimArgs },
    ]);
    const row = inserted?.rows[0];
    if (!row) {
      throw new ApiError("idempotency_key_in_use", "The claim on this Idempotency-Key expired before the pet was stored; retry later");
    }
    return toPet(row);
  }

  return {
    async listPets(query) {
      return (await db.execute(pageStatement("pets", PET_COLUMNS, query))).rows.map(toPet);
    },
    async getPet(id) {
      const { rows } = await db.execute({ sql: `SELECT ${PET_COLUMNS} FROM pets WHERE id = ?`, args: [id] });
      return rows[0] && toPet(rows[0]);
    },
    createPet,
    async listOrders(query) {
      return (await db.execute(pageStatement("orders", ORDER_COLUMNS, query))).rows.map(toOrder);
    },
    async createOrder(order: NewOrder) {
      const { rows } = await db.execute({
        sql: `INSERT INTO orders (pet_id, quantity, ship_date, status, complete) VALUES (?, ?, ?, ?, ?) RETURNING ${ORDER_COLUMNS}`,
        args: [order.petId, order.quantity, order.shipDate ?? null, order.status, order.complete],
      });
      return toOrder(rows[0]!);
    },
  };
}
