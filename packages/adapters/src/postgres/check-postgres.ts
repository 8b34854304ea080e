import type { PostgresSource } from "./_client.js";
import { engineOf } from "./_engine.js";

/**
 * Resolves when the database takes a write now; rejects with the reason otherwise (a
 * `StorageUnavailableError` when the server is down, hung past the timeout, refusing
 * connections or read-only). It rewrites one row of its own, through the same path as the
 * adapters' writes. For health checks and a start-up check; the database must be migrated.
 * @example await checkPostgres({ sql }); // before listening
 */
export async function checkPostgres(source: PostgresSource, now = Date.now()): Promise<void> {
  await engineOf(source).write([
    {
      sql: "INSERT INTO health_probe (id, checked_at) VALUES (1, $1::bigint) ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at",
      args: [now],
    },
  ]);
}
