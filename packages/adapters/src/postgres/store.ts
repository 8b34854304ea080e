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
import type { Row, Value } from "../_sql/engine.js";
import { groupedWrites } from "../_sql/grouped-writes.js";
import type { PostgresSource } from "./_client.js";
import { engineOf } from "./_engine.js";

const PET_COLUMNS = "id, name, category_id, status";
// `complete` as 0 or 1: clients disagree on how a boolean column arrives.
const ORDER_COLUMNS = "id, pet_id, quantity, ship_date, status, complete::integer AS complete";
/** Most pets one INSERT adds for the creates of one turn (see `insertPet`). */
const MAX_PETS_PER_INSERT = 64;
/**
 * The advisory lock every insert into `pets` holds to its commit: the first 8 bytes of
 * SHA-256("petstore pets") as a signed bigint. Pets then commit in the order of their ids, in
 * every process, so a client paging by `id > cursor` never passes an id that commits later.
 */
const PETS_LOCK = "4208976140421883827";

/** `INSERT` of 1, 2... `MAX_PETS_PER_INSERT` pets in the order of their rows, under the pets lock, returning them. */
const INSERT_PETS = Array.from({ length: MAX_PETS_PER_INSERT + 1 }, (_, rows) => {
  const values = Array.from({ length: rows }, (_, i) => `($${3 * i + 1}::text, $${3 * i + 2}::bigint, $${3 * i + 3}::text, ${i})`).join(", ");
  // The lock's row joins every inserted row, so it is taken before the first id is drawn.
  return `INSERT INTO pets (name, category_id, status)
    SELECT v.name, v.category_id, v.status FROM (VALUES ${values}) AS v (name, category_id, status, position)
    CROSS JOIN (SELECT pg_advisory_xact_lock(${PETS_LOCK})) AS locked
    ORDER BY v.position
    RETURNING ${PET_COLUMNS}`;
});

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
  const afterId = query.afterId ?? 0;
  return query.status === undefined
    ? { sql: `SELECT ${columns} FROM ${table} WHERE id > $1::bigint ORDER BY id LIMIT $2::integer`, args: [afterId, query.limit] }
    : { sql: `SELECT ${columns} FROM ${table} WHERE id > $1::bigint AND status = $2::text ORDER BY id LIMIT $3::integer`, args: [afterId, query.status, query.limit] };
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

  const insertPet = groupedWrites<Value[], Pet>(db, {
    max: MAX_PETS_PER_INSERT,
    make: (rows) => [{ sql: INSERT_PETS[rows.length]!, args: rows.flat() }],
    // RETURNING promises no order; the ids do: the rows were inserted in order of arrival.
    answer: ([inserted]) => inserted!.rows.map(toPet).sort((a, b) => a.id - b.id),
  });

  async function createPet(pet: NewPet, claim?: IdempotencyClaim): Promise<Pet> {
    const values = [pet.name, pet.categoryId, pet.status ?? null];
    if (!claim) return insertPet("", values);
    const [inserted] = await db.write([{ sql: INSERT_CLAIMED_PET, args: [...values, claim.scope, claim.key, claim.fingerprint], oneRow: true }]);
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
      const { rows } = await db.execute({ sql: `SELECT ${PET_COLUMNS} FROM pets WHERE id = $1::bigint`, args: [id], oneRow: true });
      return rows[0] && toPet(rows[0]);
    },
    createPet,
    async listOrders(query) {
      return (await db.execute(pageStatement("orders", ORDER_COLUMNS, query))).rows.map(toOrder);
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
