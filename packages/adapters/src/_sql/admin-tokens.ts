import type { AdminTokenRecord, AdminTokens } from "@petstore/core";
import { type Row, readOne, type SqlEngine } from "./engine.js";
import type { KeysDialect } from "./keys.js";

const COLUMNS = "id, hash, label, created_at, revoked_at";

function toRecord(row: Row): AdminTokenRecord {
  const record: AdminTokenRecord = { id: String(row.id), hash: String(row.hash), createdAt: Number(row.created_at) };
  if (row.label !== null) record.label = String(row.label);
  if (row.revoked_at !== null) record.revokedAt = Number(row.revoked_at);
  return record;
}

/** Admin tokens in a SQL database (table `admin_tokens`), shared by every server on it; creations and revocations by the database's clock. */
export function sqlAdminTokens(db: SqlEngine, sql: KeysDialect, clock?: () => number): AdminTokens {
  const { arg } = sql;
  async function get(id: string): Promise<AdminTokenRecord | undefined> {
    return readOne(db, `SELECT ${COLUMNS} FROM admin_tokens WHERE id = ${arg(1, "text")}`, [id], toRecord);
  }
  return {
    async insert(record) {
      try {
        const [inserted] = await db.write([
          {
            sql: `INSERT INTO admin_tokens (${COLUMNS}) VALUES (${arg(1, "text")}, ${arg(2, "text")}, ${arg(3, "text")}, coalesce(${arg(4, "bigint")}, ${sql.now}), ${arg(5, "bigint")}) RETURNING ${COLUMNS}`,
            args: [record.id, record.hash, record.label ?? null, clock ? clock() : null, record.revokedAt ?? null],
            oneRow: true,
          },
        ]);
        return toRecord(inserted!.rows[0]!);
      } catch (error) {
        if (sql.isDuplicate(error)) throw new Error(`Duplicate admin token ${record.id}`, { cause: error });
        throw error;
      }
    },
    get,
    async list() {
      return (await db.read(`SELECT ${COLUMNS} FROM admin_tokens ORDER BY created_at, id`)).rows.map(toRecord);
    },
    async revoke(id) {
      const [revoked] = await db.write([
        {
          sql: `UPDATE admin_tokens SET revoked_at = coalesce(${arg(2, "bigint")}, ${sql.now}) WHERE id = ${arg(1, "text")} AND revoked_at IS NULL RETURNING id`,
          args: [id, clock ? clock() : null],
        },
      ]);
      if (revoked!.rows.length > 0) return "revoked";
      return (await get(id)) ? "already_revoked" : "missing";
    },
  };
}
