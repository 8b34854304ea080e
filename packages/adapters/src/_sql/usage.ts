import { type KeyUsage, USAGE_KEPT_MS, type UsageResolution } from "@petstore/core";
import type { Row, SqlEngine, Value } from "./engine.js";
import type { KeysDialect } from "./keys.js";

const TABLES: Record<UsageResolution, string> = { minute: "key_usage_minutes", day: "key_usage_days" };
const COUNTS = "admitted, rate_limited, banned, unauthorized";
const SUMS =
  "sum(admitted) AS admitted, sum(rate_limited) AS rate_limited, sum(banned) AS banned, sum(unauthorized) AS unauthorized";
const RANKED = {
  requests: "sum(admitted + rate_limited + banned + unauthorized)",
  refusals: "sum(rate_limited + banned + unauthorized)",
};
const DAY = 86_400_000;

/** The columns of a tally as the write binds it: one JSON array of arrays, each of these in this order (see `KeysDialect.tallies`). */
export const TALLY_COLUMNS = ["key_id", "at", "admitted", "rate_limited", "banned", "unauthorized", "last_used_at"];
type JsonTally = [string, number, number, number, number, number, number | null];

const countsOf = (row: Row) => ({
  admitted: Number(row.admitted),
  rateLimited: Number(row.rate_limited),
  banned: Number(row.banned),
  unauthorized: Number(row.unauthorized),
});

/** Adds to a table's rows, an existing row's counts plus the new ones: additive, so servers adding at once lose nothing. */
const upsert = (table: string, select: string) =>
  `INSERT INTO ${table} (key_id, at, ${COUNTS}) ${select}
    ON CONFLICT (key_id, at) DO UPDATE SET ${COUNTS.split(", ")
      .map((column) => `${column} = ${table}.${column} + excluded.${column}`)
      .join(", ")}`;

/**
 * Usage history in a SQL database: `key_usage_minutes` and `key_usage_days`, one row per key
 * and span, each count added by an upsert. A batch of tallies is bound as one JSON text, so
 * that one statement of one text adds any number of them (a store limiting bound parameters,
 * D1's 100, is never reached) and is prepared once. The whole batch, with its keys' last uses
 * and the sweep of old rows, is one transaction; rows are added in key order, so that two
 * servers adding at once take their locks in one order.
 */
export function sqlUsage(db: SqlEngine, sql: KeysDialect, clock: (() => number) | undefined): KeyUsage {
  const { arg } = sql;
  const rows = sql.tallies(1);
  const nowAt = `coalesce(${arg(1, "bigint")}, ${sql.now})`;
  const add = [
    upsert(TABLES.minute, `SELECT key_id, at, ${SUMS} FROM ${rows} WHERE true GROUP BY key_id, at ORDER BY key_id, at`),
    upsert(
      TABLES.day,
      `SELECT key_id, at - at % ${DAY} AS at, ${SUMS} FROM ${rows} WHERE true GROUP BY key_id, at - at % ${DAY} ORDER BY key_id, at - at % ${DAY}`,
    ),
    `UPDATE api_keys SET last_used_at = ${sql.greatest}(coalesce(last_used_at, 0), used.at)
      FROM (SELECT key_id, max(last_used_at) AS at FROM ${rows} WHERE last_used_at IS NOT NULL GROUP BY key_id) AS used
      WHERE api_keys.id = used.key_id`,
  ];
  const sweeps = (["minute", "day"] as const).map(
    (resolution) => `DELETE FROM ${TABLES[resolution]} WHERE at < ${nowAt} - ${USAGE_KEPT_MS[resolution]}`,
  );

  return {
    async addUsage(tallies) {
      if (tallies.length === 0) return;
      const json = JSON.stringify(
        tallies.map(
          (tally): JsonTally => [
            tally.keyId,
            tally.minute,
            tally.admitted,
            tally.rateLimited,
            tally.banned,
            tally.unauthorized,
            tally.lastUsedAt ?? null,
          ],
        ),
      );
      const instant: Value = clock ? clock() : null;
      await db.write(
        [
          ...add.map((text) => ({ sql: text, args: [json] })),
          ...sweeps.map((text) => ({ sql: text, args: [instant] })),
        ],
        // Counts for an operator: they need not survive a power cut (see WriteOptions).
        { survives: "process-crash" },
      );
    },
    async usage({ keyId, resolution, from, to }) {
      const { rows: found } = await db.read({
        sql: `SELECT at, ${COUNTS} FROM ${TABLES[resolution]}
          WHERE key_id = ${arg(1, "text")} AND at >= ${arg(2, "bigint")} AND at < ${arg(3, "bigint")} ORDER BY at`,
        args: [keyId, from, to],
      });
      return found.map((row) => ({ at: Number(row.at), ...countsOf(row) }));
    },
    async topUsage({ resolution, from, to, by, limit }) {
      const { rows: found } = await db.read({
        sql: `SELECT key_id, ${SUMS} FROM ${TABLES[resolution]}
          WHERE at >= ${arg(1, "bigint")} AND at < ${arg(2, "bigint")}
          GROUP BY key_id HAVING ${RANKED[by]} > 0 ORDER BY ${RANKED[by]} DESC, key_id LIMIT ${arg(3, "integer")}`,
        args: [from, to, limit],
      });
      return found.map((row) => ({ keyId: String(row.key_id), ...countsOf(row) }));
    },
  };
}
