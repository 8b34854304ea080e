import { type ApiKeyRecord, type IssueApiKeyInput, issueApiKey } from "@petstore/core";

/** A SQL literal of a key record's value. */
const literal = (value: string | number | undefined) =>
  value === undefined ? "NULL" : typeof value === "number" ? String(value) : `'${value.replaceAll("'", "''")}'`;

/**
 * A new API key and the one `INSERT` that stores it in the `api_keys` table of the D1
 * database (`wrangler d1 execute`): `petstore keys create` cannot reach D1, this makes the
 * same record (`issueApiKey`: a `psk_` key, only its SHA-256 stored).
 */
export async function keyInsert(input: IssueApiKeyInput): Promise<{ key: string; sql: string }> {
  let record: ApiKeyRecord | undefined;
  const { key } = await issueApiKey({ insert: async (made) => void (record = made) }, input);
  const { id, hash, plan, perMinute, perDay, label, createdAt } = record!;
  const values = [id, hash, plan, perMinute, perDay, label, createdAt].map(literal).join(", ");
  return {
    key,
    sql: `INSERT INTO api_keys (id, hash, plan, per_minute, per_day, label, created_at) VALUES (${values})`,
  };
}
