import type { ApiKeyRecord, ApiKeys, PlanName } from "@petstore/core";
import type { Row } from "../_sql/engine.js";
import type { PostgresSource } from "./_client.js";
import { engineOf } from "./_engine.js";
import { sqlState } from "./_storage-errors.js";

const COLUMNS = "id, hash, plan, per_minute, per_day, label, created_at, revoked_at";

function toRecord(row: Row): ApiKeyRecord {
  const record: ApiKeyRecord = { id: String(row.id), hash: String(row.hash), plan: row.plan as PlanName, createdAt: Number(row.created_at) };
  if (row.per_minute !== null) record.perMinute = Number(row.per_minute);
  if (row.per_day !== null) record.perDay = Number(row.per_day);
  if (row.label !== null) record.label = String(row.label);
  if (row.revoked_at !== null) record.revokedAt = Number(row.revoked_at);
  return record;
}

/**
 * API key records in Postgres (run `migratePostgres` first), shared by every process on it.
 * Core caches verified keys for at most 5 s, so a revocation here reaches every process within that.
 * @example const keys = postgresKeys({ sql });
 */
export function postgresKeys(source: PostgresSource): ApiKeys {
  const db = engineOf(source);
  return {
    async insert(record) {
      try {
        await db.write([
          {
            sql: `INSERT INTO api_keys (${COLUMNS}) VALUES ($1::text, $2::text, $3::text, $4::integer, $5::integer, $6::text, $7::bigint, $8::bigint)`,
            args: [
              record.id,
              record.hash,
              record.plan,
              record.perMinute ?? null,
              record.perDay ?? null,
              record.label ?? null,
              record.createdAt,
              record.revokedAt ?? null,
            ],
          },
        ]);
      } catch (error) {
        // unique_violation
        if (sqlState(error) === "23505") throw new Error(`Duplicate API key ${record.id}`, { cause: error });
        throw error;
      }
    },
    async findByHash(hash) {
      const { rows } = await db.execute({ sql: `SELECT ${COLUMNS} FROM api_keys WHERE hash = $1::text`, args: [hash], oneRow: true });
      return rows[0] && toRecord(rows[0]);
    },
    async list() {
      return (await db.execute(`SELECT ${COLUMNS} FROM api_keys ORDER BY position`)).rows.map(toRecord);
    },
    async revoke(id, now) {
      // coalesce: revoking twice keeps the first time.
      const [updated] = await db.write([{ sql: "UPDATE api_keys SET revoked_at = coalesce(revoked_at, $1::bigint) WHERE id = $2::text", args: [now, id] }]);
      return updated!.rowsAffected > 0;
    },
  };
}
