import {
  ACCOUNTS_UPGRADE,
  FOLLOWS_ACCOUNT_COLUMN,
  newerSchemaError,
  type RequiredColumns,
  SQL_COLUMNS,
} from "../_sql/schema.js";
import { POSTGRES_NOW } from "../_sql/store-clock.js";
import type { PostgresSource } from "./_client.js";
import { storageError } from "./_storage-errors.js";

/** The key of the advisory lock migrators take: the first 8 bytes of SHA-256("petstore migrations") as a signed bigint. */
const MIGRATION_LOCK = "8797888972254416548";

/**
 * The schema, one version at a time. Append new versions; never edit an applied one (a
 * database records which versions it has, not what they said). The same tables and columns
 * as libSQL's, in Postgres types (times in Unix ms as `bigint`).
 */
const MIGRATIONS: readonly { version: number; name: string; statements: readonly string[] }[] = [
  {
    version: 1,
    name: "pets, orders, keys, rate limits, idempotency, health probe",
    statements: [
      // An identity never hands out a value twice, even after its row is deleted or its insert rolled back.
      `CREATE TABLE pets (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name text NOT NULL,
        category_id bigint NOT NULL,
        status text CHECK (status IN ('available', 'pending', 'sold'))
      )`,
      "CREATE INDEX pets_by_status ON pets (status, id)",
      `CREATE TABLE orders (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        pet_id bigint NOT NULL,
        quantity integer NOT NULL,
        ship_date text,
        status text NOT NULL CHECK (status IN ('placed', 'approved', 'delivered')),
        complete boolean NOT NULL
      )`,
      "CREATE INDEX orders_by_status ON orders (status, id)",
      // `position`: insertion order, which `list` keeps (as libSQL's rowid does).
      `CREATE TABLE api_keys (
        position bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
        id text PRIMARY KEY,
        hash text NOT NULL UNIQUE,
        plan text NOT NULL,
        per_minute integer,
        per_day integer,
        label text,
        created_at bigint NOT NULL,
        revoked_at bigint
      )`,
      // One row per bucket; see limiter.ts (and libsql/limiter.ts) for what each column means.
      `CREATE TABLE rate_limits (
        bucket text PRIMARY KEY,
        window0_start bigint NOT NULL,
        window0_count bigint NOT NULL,
        window1_start bigint NOT NULL,
        window1_count bigint NOT NULL,
        refusals bigint NOT NULL,
        banned_until bigint NOT NULL,
        expires_at bigint NOT NULL,
        admitted bigint NOT NULL,
        refused bigint NOT NULL
      )`,
      "CREATE INDEX rate_limits_by_expiry ON rate_limits (expires_at)",
      `CREATE TABLE idempotency_keys (
        scope text NOT NULL,
        key text NOT NULL,
        fingerprint text NOT NULL,
        claimed_at bigint NOT NULL,
        pet_id bigint,
        PRIMARY KEY (scope, key)
      )`,
      "CREATE INDEX idempotency_keys_by_age ON idempotency_keys (claimed_at)",
      // One row that `checkPostgres` rewrites: a write that proves the database takes writes now.
      "CREATE TABLE health_probe (id integer PRIMARY KEY CHECK (id = 1), checked_at bigint NOT NULL)",
    ],
  },
  {
    version: 2,
    name: "rate limits decided by the database's clock",
    statements: [
      // The instant the last statement decided at, by the database's clock: kept only for RETURNING.
      "ALTER TABLE rate_limits ADD COLUMN decided_at bigint NOT NULL DEFAULT 0",
    ],
  },
  {
    version: 3,
    name: "the life of a key: expiry, rolls, last use, audit trail",
    statements: [
      // The secret before the last roll, accepted until rolled_until (see _sql/keys.ts).
      `ALTER TABLE api_keys ADD COLUMN expires_at bigint, ADD COLUMN previous_hash text, ADD COLUMN rolled_at bigint,
        ADD COLUMN rolled_until bigint, ADD COLUMN last_used_at bigint`,
      "CREATE INDEX api_keys_by_previous_hash ON api_keys (previous_hash) WHERE previous_hash IS NOT NULL",
      `CREATE TABLE key_audit (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at bigint NOT NULL,
        action text NOT NULL,
        key_id text NOT NULL,
        actor text NOT NULL,
        actor_from text,
        details text
      )`,
      "CREATE INDEX key_audit_by_key ON key_audit (key_id, id)",
      // The trail is only ever added to: an edit or a deletion fails, whoever tries it.
      "CREATE OR REPLACE FUNCTION key_audit_never_edited() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the audit trail is never edited'; END $$",
      "CREATE TRIGGER key_audit_never_edited BEFORE UPDATE OR DELETE ON key_audit FOR EACH ROW EXECUTE PROCEDURE key_audit_never_edited()",
    ],
  },
  {
    version: 4,
    name: "deployment settings",
    statements: [
      // What every server on the database must agree on, recorded by the first (the binary's
      // `limiter`: where the rate limits live, so that no two servers split them).
      "CREATE TABLE settings (name text PRIMARY KEY, value text NOT NULL, changed_at bigint NOT NULL)",
    ],
  },
  {
    version: 5,
    name: "admin tokens",
    statements: [
      // The credentials of the binary's admin listener: their SHA-256 only (see core's admin/tokens.ts).
      "CREATE TABLE admin_tokens (id text PRIMARY KEY, hash text NOT NULL, label text, created_at bigint NOT NULL, revoked_at bigint)",
    ],
  },
  {
    version: 6,
    name: "usage history",
    statements: [
      // Each key's requests by outcome, by minute and by UTC day (see _sql/usage.ts); swept by
      // time. Ids in byte order ("C"), as SQLite orders them: the top keys' ties break alike.
      // The two tables are alike: one row per key and minute, one per key and UTC day.
      ...["key_usage_minutes", "key_usage_days"].flatMap((table) => [
        `CREATE TABLE ${table} (
          key_id text COLLATE "C" NOT NULL,
          at bigint NOT NULL,
          admitted bigint NOT NULL,
          rate_limited bigint NOT NULL,
          banned bigint NOT NULL,
          unauthorized bigint NOT NULL,
          PRIMARY KEY (key_id, at)
        )`,
        `CREATE INDEX ${table}_by_time ON ${table} (at)`,
      ]),
    ],
  },
  {
    version: 7,
    name: "the audit trail never truncated",
    statements: [
      // TRUNCATE fires no row trigger: a statement-level one refuses it as UPDATE and DELETE are.
      "CREATE TRIGGER key_audit_never_truncated BEFORE TRUNCATE ON key_audit FOR EACH STATEMENT EXECUTE PROCEDURE key_audit_never_edited()",
    ],
  },
  {
    version: 8,
    name: "scopes and allowed addresses of a key",
    statements: [
      // Comma-separated, read with the key in the one lookup (see _sql/keys.ts); NULL: every
      // scope, any address, which is what every key made before had.
      "ALTER TABLE api_keys ADD COLUMN scopes text, ADD COLUMN allow_from text",
    ],
  },
  {
    version: 9,
    name: "accounts",
    statements: [
      // `position`: the order accounts were made, as for keys.
      `CREATE TABLE accounts (
        position bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
        id text PRIMARY KEY,
        name text NOT NULL,
        plan text NOT NULL,
        per_minute integer,
        per_day integer,
        created_at bigint NOT NULL
      )`,
      "ALTER TABLE api_keys ADD COLUMN account_id text",
      ...ACCOUNTS_UPGRADE,
    ],
  },
  {
    version: 10,
    name: "allowed addresses of an account",
    // Comma-separated, as a key's, read with each of its keys in the one lookup; NULL: any
    // address, which is what every account made before had.
    statements: ["ALTER TABLE accounts ADD COLUMN allow_from text"],
  },
  { version: 11, name: "keys that follow their account", statements: [FOLLOWS_ACCOUNT_COLUMN] },
];

/** The columns the Postgres adapters' statements use, by table: what `checkPostgres` checks. */
// `position`: the order keys are listed in (see keys.ts).
export const POSTGRES_COLUMNS: RequiredColumns = { ...SQL_COLUMNS, api_keys: ["position", ...SQL_COLUMNS.api_keys] };

/**
 * Applies pending migrations in one transaction with their rows in `schema_migrations`, under
 * a transaction-level advisory lock: when several processes start at once, one migrates and
 * the others wait for it, then find every version applied. DDL is transactional in Postgres:
 * a failed migration leaves no half of itself. The migrator's own time limit is the server's.
 * A database with a version this release does not know (a newer one migrated it) is refused.
 * @example await migratePostgres({ sql });
 */
export async function migratePostgres(source: PostgresSource): Promise<void> {
  try {
    await source.sql.begin(async (tx) => {
      // Each statement sees what the migrator before it committed (the database's default may be stricter).
      await tx.unsafe("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
      await tx.unsafe("SELECT pg_advisory_xact_lock($1::bigint)", [MIGRATION_LOCK]);
      await tx.unsafe(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)",
      );
      const applied = new Set(
        Array.from(await tx.unsafe("SELECT version FROM schema_migrations"), (row) => Number(row.version)),
      );
      // A newer release's schema may lack what this one's statements need: refuse it whole.
      const newer = newerSchemaError(
        applied,
        MIGRATIONS.map((migration) => migration.version),
      );
      if (newer) throw newer;
      for (const migration of MIGRATIONS) {
        if (applied.has(migration.version)) continue;
        for (const statement of migration.statements) await tx.unsafe(statement);
        await tx.unsafe(
          `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1::integer, $2::text, ${POSTGRES_NOW})`,
          [migration.version, migration.name],
        );
      }
    });
  } catch (error) {
    throw storageError(error);
  }
}
