import type { ApiKeyRecord, ApiKeys, PlanName } from "@petstore/core";
import type { Row } from "../_sql/engine.js";
import { engineOf, type LibsqlSource } from "./_source.js";

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
 * API key records in a libSQL database (run `migrate` first), shared by every process on it.
 * Core caches verified keys for at most 5 s, so a revocation here reaches every process within that.
 */
export function libsqlKeys(source: LibsqlSource): ApiKeys {
  const db = engineOf(source);
  return {
    async insert(record) {
      try {
        await db.write([
          {
            sql: `INSERT INTO api_keys (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
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
        if (String((error as { code?: unknown }).code).startsWith("SQLITE_CONSTRAINT")) throw new Error(`Duplicate API key ${record.id}`, { cause: error });
        throw error;
      }
    },
    async findByHash(hash) {
      const { rows } = await db.execute({ sql: `SELECT ${COLUMNS} FROM api_keys WHERE hash = ?`, args: [hash], oneRow: true });
      return rows[0] && toRecord(rows[0]);
    },
    async list() {
      // rowid order is insertion order, as with the memory adapter.
      return (await db.execute(`SELECT ${COLUMNS} FROM api_keys ORDER BY rowid`)).rows.map(toRecord);
    },
    async revoke(id, now) {
      // coalesce: revoking twice keeps the first time.
      const [updated] = await db.write([{ sql: "UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?", args: [now, id] }]);
      return updated!.rowsAffected > 0;
    },
  };
}
