/**
 * The peers' storage in a SQLite file, as a team would hand-build it with the runtime's own
 * driver (`bun:sqlite` under Bun, `node:sqlite` under Deno; both synchronous, with the same
 * `exec` / `prepare().get()` / `.all()` shape): WAL, the rate-limit counter upserted by every
 * request (one statement, its own transaction), every pet kept in a table. With
 * `synchronous=FULL` each of those commits is fsynced before the answer, durable like the
 * product's 201s; with `NORMAL` (WAL's usual setting) a power cut may take back the last ones.
 */
import type { PeerStorage, Pet } from "./_peer.js";

/** What both runtimes' SQLite drivers offer. */
export interface SqliteDatabase {
  exec(sql: string): unknown;
  prepare(sql: string): {
    get(...params: (string | number | null)[]): unknown;
    all(...params: (string | number | null)[]): unknown[];
  };
}

export type Synchronous = "NORMAL" | "FULL";

interface PetRow {
  id: number;
  name: string;
  categoryId: number;
  status: Pet["status"] | null;
}

/** A row as the API's pet: a plain object, `status` left out when none was given. */
const asPet = (row: PetRow): Pet => ({
  id: row.id,
  name: row.name,
  categoryId: row.categoryId,
  ...(row.status !== null && { status: row.status }),
});

/** The tables made when missing, and the peer's storage on them. */
export function sqliteStorage(db: SqliteDatabase, synchronous: Synchronous): PeerStorage {
  db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = ${synchronous}; PRAGMA busy_timeout = 5000;`);
  db.exec(`CREATE TABLE IF NOT EXISTS counters (key_id TEXT PRIMARY KEY, minute_start INTEGER NOT NULL, minute_count INTEGER NOT NULL, day_start INTEGER NOT NULL, day_count INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS pets (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, category_id INTEGER NOT NULL, status TEXT);`);
  // A window that started earlier than the request's is reset; one statement, so concurrent
  // processes on the file would still count exactly.
  const hit =
    db.prepare(`INSERT INTO counters (key_id, minute_start, minute_count, day_start, day_count) VALUES (?, ?, 1, ?, 1)
    ON CONFLICT (key_id) DO UPDATE SET
      minute_count = CASE WHEN minute_start = excluded.minute_start THEN minute_count + 1 ELSE 1 END,
      day_count = CASE WHEN day_start = excluded.day_start THEN day_count + 1 ELSE 1 END,
      minute_start = excluded.minute_start,
      day_start = excluded.day_start
    RETURNING minute_count AS minuteCount, day_count AS dayCount`);
  const insert = db.prepare(
    "INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING id, name, category_id AS categoryId, status",
  );
  const page = db.prepare(
    "SELECT id, name, category_id AS categoryId, status FROM pets WHERE id > ? ORDER BY id LIMIT ?",
  );
  return {
    hit: (keyId, minuteStart, dayStart) =>
      hit.get(keyId, minuteStart, dayStart) as { minuteCount: number; dayCount: number },
    insertPet: (input) => asPet(insert.get(input.name, input.categoryId, input.status ?? null) as PetRow),
    pets: (after, limit) => {
      // One row more than the page tells whether another page follows.
      const rows = page.all(after, limit + 1) as PetRow[];
      return { page: rows.slice(0, limit).map(asPet), more: rows.length > limit };
    },
  };
}

/** BENCH_SYNCHRONOUS: FULL (the default: durable like the product) or NORMAL. */
export function synchronousFromEnv(value: string | undefined): Synchronous {
  if (value === undefined || value === "FULL") return "FULL";
  if (value === "NORMAL") return "NORMAL";
  throw new Error(`BENCH_SYNCHRONOUS must be FULL or NORMAL, not ${value}`);
}
