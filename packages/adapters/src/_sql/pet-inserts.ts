import type { Pet } from "@petstore/core";
import type { SqlEngine, Value } from "./engine.js";
import { groupedWrites } from "./grouped-writes.js";
import { toPet } from "./rows.js";

/** Most pets one INSERT adds for the creates of one write. */
const MAX_PETS_PER_INSERT = 64;

/**
 * Creates without a claim: the creates that arrive before the engine makes the statement (on
 * a local engine: before its next write batch; elsewhere: within one turn of the event loop)
 * are inserted by one multi-row INSERT, `insertText(rows)` (rows of name, category id and
 * status, returning the pets; each text made once): a statement per pet cost more than the
 * pets. Ids follow the order of the rows, which is the order of arrival. Each caller is
 * answered once the write is durable, like any write.
 * @returns `insert(values)`: the name, category id and status of one pet; resolves with the pet.
 */
export function petInserts(db: SqlEngine, insertText: (rows: number) => string): (values: Value[]) => Promise<Pet> {
  const texts = Array.from({ length: MAX_PETS_PER_INSERT + 1 }, (_, rows) => (rows === 0 ? "" : insertText(rows)));
  const join = groupedWrites<Value[], Pet>(db, {
    max: MAX_PETS_PER_INSERT,
    // Not prepared: up to 64 texts, one per count, each of which a burst would prepare on every connection.
    make: (rows) => [{ sql: texts[rows.length]!, args: rows.flat(), prepare: false }],
    // RETURNING promises no order; the ids do: the rows were inserted in order of arrival.
    answer: ([inserted]) => inserted!.rows.map(toPet).sort((a, b) => a.id - b.id),
  });
  return (values) => join("", values);
}
