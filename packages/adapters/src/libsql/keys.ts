import type { ApiKeys } from "@petstore/core";
import { KEY_COLUMNS, keyRecordValues, toKeyRecord } from "../_sql/rows.js";
import { engineOf, type LibsqlSource } from "./_source.js";

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
            sql: `INSERT INTO api_keys (${KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
            args: keyRecordValues(record),
          },
        ]);
      } catch (error) {
        if (String((error as { code?: unknown }).code).startsWith("SQLITE_CONSTRAINT")) throw new Error(`Duplicate API key ${record.id}`, { cause: error });
        throw error;
      }
    },
    async findByHash(hash) {
      const { rows } = await db.execute({ sql: `SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = ?`, args: [hash], oneRow: true });
      return rows[0] && toKeyRecord(rows[0]);
    },
    async list() {
      // rowid order is insertion order, as with the memory adapter.
      return (await db.execute(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY rowid`)).rows.map(toKeyRecord);
    },
    async revoke(id, now) {
      // coalesce: revoking twice keeps the first time.
      const [updated] = await db.write([{ sql: "UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?", args: [now, id] }]);
      return updated!.rowsAffected > 0;
    },
  };
}
