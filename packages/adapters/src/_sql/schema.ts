// What the adapters' statements need of a database's schema, checked by the health checks:
// a table or column changed by hand (or by another program) fails the check by name instead
// of failing every request with a 500.

/** The columns the statements use, by table. */
export type RequiredColumns = Readonly<Record<string, readonly string[]>>;

/** The columns the SQL adapters' statements use in both dialects, by table (each adds its own). */
export const SQL_COLUMNS = {
  pets: ["id", "name", "category_id", "status"],
  orders: ["id", "pet_id", "quantity", "ship_date", "status", "complete"],
  api_keys: [
    "id",
    "hash",
    "plan",
    "per_minute",
    "per_day",
    "label",
    "created_at",
    "revoked_at",
    "expires_at",
    "previous_hash",
    "rolled_at",
    "rolled_until",
    "last_used_at",
    "scopes",
    "allow_from",
    "account_id",
    "follows_account",
  ],
  accounts: ["id", "name", "plan", "per_minute", "per_day", "created_at", "allow_from"],
  key_audit: ["id", "at", "action", "key_id", "actor", "actor_from", "details"],
  admin_tokens: ["id", "hash", "label", "created_at", "revoked_at"],
  rate_limits: [
    "bucket",
    "window0_start",
    "window0_count",
    "window1_start",
    "window1_count",
    "refusals",
    "banned_until",
    "expires_at",
    "admitted",
    "refused",
    "decided_at",
  ],
  idempotency_keys: ["scope", "key", "fingerprint", "claimed_at", "pet_id"],
  health_probe: ["id", "checked_at"],
  key_usage_minutes: ["key_id", "at", "admitted", "rate_limited", "banned", "unauthorized"],
  key_usage_days: ["key_id", "at", "admitted", "rate_limited", "banned", "unauthorized"],
} as const satisfies RequiredColumns;

/**
 * Why the schema cannot serve the statements ("the database lacks pets.status"), given the
 * `table.column` names it has; undefined when it has every one.
 */
export function schemaProblem(required: RequiredColumns, present: Iterable<string>): string | undefined {
  const have = new Set(present);
  const missing = Object.entries(required).flatMap(([table, columns]) =>
    columns.map((column) => `${table}.${column}`).filter((name) => !have.has(name)),
  );
  if (missing.length === 0) return undefined;
  return `the database lacks ${missing.join(", ")}, which petstore's statements need (changed outside petstore?)`;
}

/** A schema that holds versions this release does not know: a newer release migrated it. */
export function newerSchemaError(applied: Iterable<number>, known: readonly number[]): Error | undefined {
  const unknown = [...applied].filter((version) => !known.includes(version)).sort((a, b) => a - b);
  if (unknown.length === 0) return undefined;
  return new Error(
    `the database's schema has version ${unknown.join(", ")}, newer than this petstore knows (up to ${Math.max(...known)}): a newer release migrated it; run that release or a newer one`,
  );
}

/** The id of the account made for a key, in SQL over its `id` column: `acct_` and its id's characters after `key_`. */
const OWN_ACCOUNT_ID_SQL = "'acct_' || CASE WHEN substr(id, 1, 4) = 'key_' THEN substr(id, 5) ELSE id END";

/**
 * The upgrade to accounts, the same in both dialects: every key becomes the one key of an
 * account of its own, made with its plan and limits (so every key is limited as before), named
 * after its label or its id, made when the key was.
 */
export const ACCOUNTS_UPGRADE: readonly string[] = [
  `INSERT INTO accounts (id, name, plan, per_minute, per_day, created_at)
    SELECT ${OWN_ACCOUNT_ID_SQL}, coalesce(label, id), plan, per_minute, per_day, created_at FROM api_keys ORDER BY created_at, id`,
  `UPDATE api_keys SET account_id = ${OWN_ACCOUNT_ID_SQL}`,
  "CREATE INDEX api_keys_by_account ON api_keys (account_id)",
];

/**
 * Which keys follow their account's plan and limits (1: read from the account, the key's own
 * plan and limits columns unused) and which carry caps of their own (0). Every key there
 * follows its account: after the upgrade to accounts each is alone in its own, with its limits.
 */
export const FOLLOWS_ACCOUNT_COLUMN = "ALTER TABLE api_keys ADD COLUMN follows_account INTEGER NOT NULL DEFAULT 1";
