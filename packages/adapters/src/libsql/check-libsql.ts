import { engineOf, type LibsqlSource } from "./_source.js";

/**
 * Resolves when the database takes a write now; rejects with the reason otherwise (a
 * `StorageUnavailableError` when it is locked, read-only, full, removed or unreachable). It
 * rewrites one row of its own, through the same commit path as the adapters' writes, so that
 * what fails a create fails it too. For health checks (a server's `/healthz`, a start-up
 * check); the database must be migrated.
 * @example await checkLibsql(db); // before listening
 */
export async function checkLibsql(source: LibsqlSource, now = Date.now()): Promise<void> {
  await engineOf(source).write(
    [{ sql: "INSERT INTO health_probe (id, checked_at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at", args: [now] }],
    // Nothing to keep across a power cut: skip the fsync, as the limiter's counts do.
    { survives: "process-crash" },
  );
}
