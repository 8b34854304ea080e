import type { ClaimedCreate, IdempotencyClaim, NewOrder, NewPet, PageQuery, PetStore } from "@petstore/core";
import { readOne } from "../_sql/engine.js";
import { petInserts } from "../_sql/pet-inserts.js";
import { PET_COLUMNS, toOrder, toPet } from "../_sql/rows.js";
import { engineOf, type LibsqlSource } from "./_source.js";

const ORDER_COLUMNS = "id, pet_id, quantity, ship_date, status, complete";
/** `INSERT` of `rows` pets, returning them. */
const insertPets = (rows: number) =>
  `INSERT INTO pets (name, category_id, status) VALUES ${Array(rows).fill("(?, ?, ?)").join(", ")} RETURNING ${PET_COLUMNS}`;

/** `SELECT` of one page: ids above `afterId`, ascending, optionally of one status. */
function pageStatement(table: string, columns: string, query: PageQuery<string>) {
  const byStatus = query.status === undefined ? "" : " AND status = ?";
  return {
    sql: `SELECT ${columns} FROM ${table} WHERE id > ?${byStatus} ORDER BY id LIMIT ?`,
    args:
      query.status === undefined ? [query.afterId ?? 0, query.limit] : [query.afterId ?? 0, query.status, query.limit],
  };
}

/**
 * Pets and orders in a libSQL database (run `migrateLibsql` first). Ids come from `AUTOINCREMENT`:
 * unique and never reused, also across processes sharing the database. A create with an
 * idempotency claim completes the claim in the same transaction as the insert.
 * @example const store = libsqlStore(await connectLibsql({ url: "file:petstore.db" }));
 */
export function libsqlStore(source: LibsqlSource): PetStore {
  const db = engineOf(source);
  /** Moves with every change to pets, by any process (see migrations.ts). */
  const petsVersion = async () =>
    Number((await db.readVersion({ sql: "SELECT version FROM pets_version", oneRow: true })).rows[0]!.version);

  const insertPet = petInserts(db, insertPets);

  async function createClaimedPet(pet: NewPet, claim: IdempotencyClaim): Promise<ClaimedCreate> {
    const values = [pet.name, pet.categoryId, pet.status ?? null];
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
        oneRow: true,
      },
      { sql: `UPDATE idempotency_keys SET pet_id = last_insert_rowid() WHERE ${held}`, args: claimArgs },
    ]);
    const row = inserted?.rows[0];
    return row ? { state: "created", pet: toPet(row) } : { state: "claim_lost" };
  }

  return {
    // A remote database answers one page in one round trip: a version read first would cost
    // a second one. In process, the list every client polls costs this small read instead.
    ...(db.inProcess ? { petsVersion } : {}),
    async listPets(query) {
      const { rows } = await db.read(pageStatement("pets", PET_COLUMNS, query));
      return rows.map(toPet);
    },
    async getPet(id) {
      return readOne(db, `SELECT ${PET_COLUMNS} FROM pets WHERE id = ?`, [id], toPet);
    },
    createPet: (pet) => insertPet([pet.name, pet.categoryId, pet.status ?? null]),
    createClaimedPet,
    async listOrders(query) {
      const { rows } = await db.read(pageStatement("orders", ORDER_COLUMNS, query));
      return rows.map(toOrder);
    },
    async createOrder(order: NewOrder) {
      const [inserted] = await db.write([
        {
          sql: `INSERT INTO orders (pet_id, quantity, ship_date, status, complete) VALUES (?, ?, ?, ?, ?) RETURNING ${ORDER_COLUMNS}`,
          args: [order.petId, order.quantity, order.shipDate ?? null, order.status, order.complete ? 1 : 0],
          oneRow: true,
        },
      ]);
      return toOrder(inserted!.rows[0]!);
    },
  };
}
