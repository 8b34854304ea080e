import { schemaProblem } from "../_sql/schema.js";
import { POSTGRES_NOW } from "../_sql/store-clock.js";
import type { PostgresSource } from "./_client.js";
import { engineOf } from "./_engine.js";
import { POSTGRES_COLUMNS } from "./migrations.js";

/** Every column of the tables in the schema the client's statements resolve to (its `search_path`'s first). */
const COLUMNS_SQL = `SELECT c.relname || '.' || a.attname AS name FROM pg_attribute AS a JOIN pg_class AS c ON c.oid = a.attrelid
  WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped`;

/**
 * Resolves with the PostgreSQL server's clock (Unix ms) when the database takes a write now and
 * has what the adapters' statements need; rejects with the reason otherwise (a
 * `StorageUnavailableError` when the server is down, hung past the timeout, refusing
 * connections or read-only; an `Error` naming the missing tables and columns when the schema
 * was changed by hand). It rewrites one row of its own, through the same path as the adapters'
 * writes, stamped by the server, then reads the schema's columns. For health checks, a
 * start-up check, and to see how far this machine's clock is from the database's (which
 * decides every window, ban and expiry); the database must be migrated.
 * @example await checkPostgres({ sql }); // before listening
 */
export async function checkPostgres(source: PostgresSource): Promise<number> {
  const engine = engineOf(source);
  const [probe] = await engine.write([
    {
      sql: `INSERT INTO health_probe (id, checked_at) VALUES (1, ${POSTGRES_NOW}) ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at RETURNING checked_at`,
      oneRow: true,
    },
  ]);
  // And the statements find what they need: a column dropped by hand fails every request.
  const problem = schemaProblem(
    POSTGRES_COLUMNS,
    (await engine.read(COLUMNS_SQL)).rows.map((row) => String(row.name)),
  );
  if (problem !== undefined) throw new Error(problem);
  return Number(probe!.rows[0]!.checked_at);
}
