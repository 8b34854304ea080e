import { type IssueApiKeyInput, issueApiKey, type NewApiKeyRecord } from "@petstore/core";

/** A SQL literal of a key record's value. */
const literal = (value: string | number | undefined) =>
  value === undefined ? "NULL" : typeof value === "number" ? String(value) : `'${value.replaceAll("'", "''")}'`;

/** D1's clock, Unix ms: a key's creation is its store's instant. */
const D1_NOW = "CAST(round((julianday('now') - 2440587.5) * 86400000) AS INTEGER)";

/**
 * A new API key and the one `INSERT` that stores it in the `api_keys` table of the D1
 * database (`wrangler d1 execute`): `petstore keys create` cannot reach D1, this makes the
 * same record (`issueApiKey`: a `psk_` key, only its SHA-256 stored, its rules checked).
 */
export async function keyInsert(input: IssueApiKeyInput): Promise<{ key: string; sql: string }> {
  let record: NewApiKeyRecord | undefined;
  const { key } = await issueApiKey(
    {
      insert: async (made) => {
        record = made;
        return { state: "inserted", record: { ...made, createdAt: Date.now() } };
      },
    },
    input,
  );
  const { id, hash, plan, perMinute, perDay, label } = record!;
  const values = [id, hash, plan, perMinute, perDay, label].map(literal).join(", ");
  return {
    key,
    sql: `INSERT INTO api_keys (id, hash, plan, per_minute, per_day, label, created_at) VALUES (${values}, ${D1_NOW})`,
  };
}
