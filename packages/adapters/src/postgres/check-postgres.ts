import { POSTGRES_NOW } from "../_sql/store-clock.js";
import type { PostgresSource } from "./_client.js";
import { engineOf } from "./_engine.js";

/**
 * Resolves with the PostgreSQL server's clock (Unix ms) when the database takes a write now;
 * rejects with the reason otherwise (a `StorageUnavailableError` when the server is down, hung
 * past the timeout, refusing connections or read-only). It rewrites one row of its own,
 * through the same path as the adapters' writes, stamped by the server. For health checks, a
 * start-up check, and to see how far this machine's clock is from the database's (which
 * decides every window, ban and expiry); the database must be migrated.
 * @example await checkPostgres({ sql }); // before listening
 */
export async function checkPostgres(source: PostgresSource): Promise<number> {
  const [probe] = await engineOf(source).write([
    {
      sql: `INSERT INTO health_probe (id, checked_at) VALUES (1, ${POSTGRES_NOW}) ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at RETURNING checked_at`,
      oneRow: true,
    },
  ]);
  return Number(probe!.rows[0]!.checked_at);
}
