import type { ApiKeys } from "@petstore/core";
import { KEY_COLUMNS, keyRecordValues, toKeyRecord } from "../_sql/rows.js";
import type { PostgresSource } from "./_client.js";
import { engineOf } from "./_engine.js";
import { sqlState } from "./_storage-errors.js";

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
            sql: `INSERT INTO api_keys (${KEY_COLUMNS}) VALUES ($1::text, $2::text, $3::text, $4::integer, $5::integer, $6::text, $7::bigint, $8::bigint)`,
            args: keyRecordValues(record),
          },
        ]);
      } catch (error) {
        // unique_violation
        if (sqlState(error) === "23505") throw new Error(`Duplicate API key ${record.id}`, { cause: error });
        throw error;
      }
    },
    async findByHash(hash) {
      const { rows } = await db.execute({ sql: `SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = $1::text`, args: [hash], oneRow: true });
      return rows[0] && toKeyRecord(rows[0]);
    },
    async list() {
      return (await db.execute(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY position`)).rows.map(toKeyRecord);
    },
    async revoke(id, now) {
      // coalesce: revoking twice keeps the first time.
      const [updated] = await db.write([{ sql: "UPDATE api_keys SET revoked_at = coalesce(revoked_at, $1::bigint) WHERE id = $2::text", args: [now, id] }]);
      return updated!.rowsAffected > 0;
    },
  };
}
