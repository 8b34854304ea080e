import type { ClaimedCreate, IdempotencyClaim, NewOrder, NewPet, PageQuery, PetStore } from "@petstore/core";
import { readOne } from "../_sql/engine.js";
import { petInserts } from "../_sql/pet-inserts.js";
import { PET_COLUMNS, toOrder, toPet } from "../_sql/rows.js";
import type { PostgresSource } from "./_client.js";
import { engineOf } from "./_engine.js";

// `complete` as 0 or 1: clients disagree on how a boolean column arrives.
const ORDER_COLUMNS = "id, pet_id, quantity, ship_date, status, complete::integer AS complete";
/**
 * The advisory lock every insert into `pets` holds to its commit: the first 8 bytes of
 * SHA-256("petstore pets") as a signed bigint. Pets then commit in the order of their ids, in
 * every process, so a client paging by `id > cursor` never passes an id that commits later.
 */
const PETS_LOCK = "4208976140421883827";

/** `INSERT` of `rows` pets in the order of their rows, under the pets lock, returning them. */
const insertPets = (rows: number) => {
  const values = Array.from(
    { length: rows },
    (_, i) => `($${3 * i + 1}::text, $${3 * i + 2}::bigint, $${3 * i + 3}::text, ${i})`,
  ).join(", ");
  // The lock's row joins every inserted row, so it is taken before the first id is drawn.
  return `INSERT INTO pets (name, category_id, status)
    SELECT v.name, v.category_id, v.status FROM (VALUES ${values}) AS v (name, category_id, status, position)
    CROSS JOIN (SELECT pg_advisory_xact_lock(${PETS_LOCK})) AS locked
    ORDER BY v.position
    RETURNING ${PET_COLUMNS}`;
};

/**
 * A create that completes an idempotency claim, as ONE statement: under the pets lock, the
 * claim's row locked while it is still held (unfinished, same body), the pet inserted only
 * then, and the claim completed with its id. A claim taken over after its lease ran out, or
 * completed meanwhile, yields no pet.
 */
const INSERT_CLAIMED_PET = `
WITH locked AS (SELECT pg_advisory_xact_lock(${PETS_LOCK})),
held AS (
  SELECT 1 FROM idempotency_keys
  WHERE scope = $4::text AND key = $5::text AND fingerprint = $6::text AND pet_id IS NULL
  FOR UPDATE
),
pet AS (
  INSERT INTO pets (name, category_id, status)
  SELECT $1::text, $2::bigint, $3::text FROM held CROSS JOIN locked
  RETURNING ${PET_COLUMNS}
),
completed AS (
  UPDATE idempotency_keys SET pet_id = pet.id FROM pet
  WHERE scope = $4::text AND key = $5::text AND fingerprint = $6::text AND idempotency_keys.pet_id IS NULL
)
SELECT ${PET_COLUMNS} FROM pet`;

/** `SELECT` of one page: ids above `afterId`, ascending, optionally of one status. */
function pageStatement(table: string, columns: string, query: PageQuery<string>) {
  const afterId = query.afterId ?? 0;
  return query.status === undefined
    ? {
        sql: `SELECT ${columns} FROM ${table} WHERE id > $1::bigint ORDER BY id LIMIT $2::integer`,
        args: [afterId, query.limit],
      }
    : {
        sql: `SELECT ${columns} FROM ${table} WHERE id > $1::bigint AND status = $2::text ORDER BY id LIMIT $3::integer`,
        args: [afterId, query.status, query.limit],
      };
}

/**
 * Pets and orders in Postgres (run `migratePostgres` first). Ids come from identity columns:
 * unique and never reused, and pets commit in the order of their ids in every process (an
 * advisory lock held by each insert to its commit). The creates of one turn of the event loop
 * are inserted by one statement (one round trip); a create with an idempotency claim completes
 * the claim in the same statement.
 * @example const store = postgresStore({ sql });
 */
export function postgresStore(source: PostgresSource): PetStore {
  const db = engineOf(source);

  const insertPet = petInserts(db, insertPets);

  async function createClaimedPet(pet: NewPet, claim: IdempotencyClaim): Promise<ClaimedCreate> {
    const values = [pet.name, pet.categoryId, pet.status ?? null];
    const [inserted] = await db.write([
      { sql: INSERT_CLAIMED_PET, args: [...values, claim.scope, claim.key, claim.fingerprint], oneRow: true },
    ]);
    const row = inserted?.rows[0];
    return row ? { state: "created", pet: toPet(row) } : { state: "claim_lost" };
  }

  return {
    async listPets(query) {
      return (await db.read(pageStatement("pets", PET_COLUMNS, query))).rows.map(toPet);
    },
    async getPet(id) {
      return readOne(db, `SELECT ${PET_COLUMNS} FROM pets WHERE id = $1::bigint`, [id], toPet);
    },
    createPet: (pet) => insertPet([pet.name, pet.categoryId, pet.status ?? null]),
    createClaimedPet,
    async listOrders(query) {
      return (await db.read(pageStatement("orders", ORDER_COLUMNS, query))).rows.map(toOrder);
    },
    async createOrder(order: NewOrder) {
      const [inserted] = await db.write([
        {
          sql: `INSERT INTO orders (pet_id, quantity, ship_date, status, complete)
                VALUES ($1::bigint, $2::integer, $3::text, $4::text, $5::integer <> 0) RETURNING ${ORDER_COLUMNS}`,
          // A boolean as 0 or 1: the adapters bind no booleans (see Value).
          args: [order.petId, order.quantity, order.shipDate ?? null, order.status, order.complete ? 1 : 0],
          oneRow: true,
        },
      ]);
      return toOrder(inserted!.rows[0]!);
    },
  };
}
