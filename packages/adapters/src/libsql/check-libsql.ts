import { StorageUnavailableError } from "@petstore/core";
import { schemaProblem } from "../_sql/schema.js";
import { SQLITE_NOW } from "../_sql/store-clock.js";
import { engineOf, type LibsqlSource } from "./_source.js";
import { LIBSQL_COLUMNS } from "./migrations.js";

/** Every column of every table, as `table.column`. */
const COLUMNS_SQL =
  "SELECT m.name || '.' || p.name AS name FROM sqlite_schema AS m, pragma_table_info(m.name) AS p WHERE m.type = 'table'";

/**
 * Resolves with the database's clock (Unix ms: a libSQL server's own, this machine's for a
 * local file) when the database takes a write now and its commits reach the disk; rejects with
 * the reason otherwise (a `StorageUnavailableError` when it is locked, read-only, full,
 * removed, its log cannot be fsynced, or it is unreachable; an `Error` naming the missing
 * tables and columns when the schema was changed by hand). It rewrites one row of its own,
 * through the same commit path as the adapters' writes, so that what fails a create fails it
 * too, then reads the schema's columns. For health checks (a server's `/healthz`, a start-up
 * check), and to see how far this machine's clock is from the database's; the database must
 * be migrated.
 * @example await checkLibsql(db); // before listening
 */
export async function checkLibsql(source: LibsqlSource): Promise<number> {
  const engine = engineOf(source);
  const [probe] = await engine.write(
    [
      {
        sql: `INSERT INTO health_probe (id, checked_at) VALUES (1, ${SQLITE_NOW}) ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at RETURNING checked_at`,
        oneRow: true,
      },
    ],
    // Nothing to keep across a power cut: skip the fsync, as the limiter's counts do.
    { survives: "process-crash" },
  );
  // And the statements find what they need: a column dropped by hand fails every request. The
  // read resolves once the disk took what was committed: a failed or hanging fsync fails the check too.
  const missing = schemaProblem(
    LIBSQL_COLUMNS,
    (await engine.read(COLUMNS_SQL)).rows.map((row) => String(row.name)),
  );
  // And nothing fails beside the requests: checkpoints that no longer reach the database file.
  const problem = engine.problem?.();
  if (problem !== undefined) throw new StorageUnavailableError(problem);
  if (missing !== undefined) throw new Error(missing);
  return Number(probe!.rows[0]!.checked_at);
}
