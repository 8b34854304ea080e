import { type IssueApiKeyInput, issueApiKey, type NewApiKeyRecord, ownAccountId } from "@petstore/core";

/** A SQL literal of a key record's value. */
const literal = (value: string | number | undefined) =>
  value === undefined ? "NULL" : typeof value === "number" ? String(value) : `'${value.replaceAll("'", "''")}'`;

/** D1's clock, Unix ms: a key's creation is its store's instant. */
const D1_NOW = "CAST(round((julianday('now') - 2440587.5) * 86400000) AS INTEGER)";

/**
 * A new API key and the two `INSERT`s that store it in the D1 database (`wrangler d1
 * execute`): its own account's, then its own in `api_keys`. `petstore keys create` cannot
 * reach D1; this makes the same records (`issueApiKey`: a `psk_` key, only its SHA-256
 * stored, its rules checked).
 */
export async function keyInsert(input: IssueApiKeyInput): Promise<{ key: string; sql: string }> {
  let record: NewApiKeyRecord | undefined;
  const { key } = await issueApiKey(
    {
      insert: async (made) => {
        record = made;
        return {
          state: "inserted",
          record: { ...made, accountId: made.accountId ?? ownAccountId(made.id), createdAt: Date.now() },
        };
      },
    },
    input,
  );
  const { id, hash, plan, perMinute, perDay, label } = record!;
  const accountId = ownAccountId(id);
  const account = [accountId, label ?? id, plan, perMinute, perDay].map(literal).join(", ");
  const values = [id, hash, plan, perMinute, perDay, label, accountId].map(literal).join(", ");
  // The key's own account, with its plan and limits, as `petstore keys create` makes it.
  return {
    key,
    sql: `INSERT INTO accounts (id, name, plan, per_minute, per_day, created_at) VALUES (${account}, ${D1_NOW}); INSERT INTO api_keys (id, hash, plan, per_minute, per_day, label, account_id, created_at) VALUES (${values}, ${D1_NOW})`,
  };
}
