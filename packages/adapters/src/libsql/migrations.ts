import {
  ACCOUNTS_UPGRADE,
  FOLLOWS_ACCOUNT_COLUMN,
  newerSchemaError,
  type RequiredColumns,
  SQL_COLUMNS,
} from "../_sql/schema.js";
import { SQLITE_NOW } from "../_sql/store-clock.js";
import { engineOf, type LibsqlSource } from "./_source.js";

/**
 * The schema, one version at a time. Append new versions; never edit an applied one (a
 * database records which versions it has, not what they said).
 */
const MIGRATIONS: readonly { version: number; name: string; statements: readonly string[] }[] = [
  {
    version: 1,
    name: "pets, orders, keys, rate limits, idempotency",
    statements: [
      // AUTOINCREMENT: an id is never handed out twice, even after its row is deleted.
      `CREATE TABLE pets (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        category_id INTEGER NOT NULL,
        status TEXT CHECK (status IN ('available', 'pending', 'sold'))
      )`,
      "CREATE INDEX pets_by_status ON pets (status, id)",
      `CREATE TABLE orders (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        pet_id INTEGER NOT NULL,
        quantity INTEGER NOT NULL,
        ship_date TEXT,
        status TEXT NOT NULL CHECK (status IN ('placed', 'approved', 'delivered')),
        complete INTEGER NOT NULL CHECK (complete IN (0, 1))
      )`,
      "CREATE INDEX orders_by_status ON orders (status, id)",
      `CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        hash TEXT NOT NULL UNIQUE,
        plan TEXT NOT NULL,
        per_minute INTEGER,
        per_day INTEGER,
        label TEXT,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      )`,
      // One row per bucket; see limiter.ts for what each column means.
      `CREATE TABLE rate_limits (
        bucket TEXT PRIMARY KEY,
        window0_start INTEGER NOT NULL,
        window0_count INTEGER NOT NULL,
        window1_start INTEGER NOT NULL,
        window1_count INTEGER NOT NULL,
        refusals INTEGER NOT NULL,
        banned_until INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        outcome INTEGER NOT NULL
      ) WITHOUT ROWID`,
      "CREATE INDEX rate_limits_by_expiry ON rate_limits (expires_at)",
      `CREATE TABLE idempotency_keys (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        claimed_at INTEGER NOT NULL,
        pet_id INTEGER,
        PRIMARY KEY (scope, key)
      ) WITHOUT ROWID`,
      "CREATE INDEX idempotency_keys_by_age ON idempotency_keys (claimed_at)",
    ],
  },
  {
    version: 2,
    name: "pets version, counting every change to pets",
    statements: [
      // One row, bumped in the same transaction as any change to pets, whoever makes it: a page
      // of pets read at a version stays exact until the version moves (see store.ts).
      "CREATE TABLE pets_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)",
      "INSERT INTO pets_version (id, version) VALUES (1, 0)",
      "CREATE TRIGGER pets_version_after_insert AFTER INSERT ON pets BEGIN UPDATE pets_version SET version = version + 1; END",
      "CREATE TRIGGER pets_version_after_update AFTER UPDATE ON pets BEGIN UPDATE pets_version SET version = version + 1; END",
      "CREATE TRIGGER pets_version_after_delete AFTER DELETE ON pets BEGIN UPDATE pets_version SET version = version + 1; END",
    ],
  },
  {
    version: 3,
    name: "rate limits decided for several hits at once",
    statements: [
      // How many of a statement's hits were admitted, and how many refusals it counted toward
      // the ban (limiter.ts): kept only for RETURNING. They replace `outcome`, which described one hit.
      "ALTER TABLE rate_limits ADD COLUMN admitted INTEGER NOT NULL DEFAULT 0",
      "ALTER TABLE rate_limits ADD COLUMN refused INTEGER NOT NULL DEFAULT 0",
      "ALTER TABLE rate_limits DROP COLUMN outcome",
    ],
  },
  {
    version: 4,
    name: "health probe",
    statements: [
      // One row that `checkLibsql` rewrites: a write that proves the database takes writes now.
      "CREATE TABLE health_probe (id INTEGER PRIMARY KEY CHECK (id = 1), checked_at INTEGER NOT NULL)",
    ],
  },
  {
    version: 5,
    name: "rate limits decided by the database's clock",
    statements: [
      // The instant the last statement decided at, by the database's clock: kept only for RETURNING.
      "ALTER TABLE rate_limits ADD COLUMN decided_at INTEGER NOT NULL DEFAULT 0",
    ],
  },
  {
    version: 6,
    name: "the life of a key: expiry, rolls, last use, audit trail",
    statements: [
      "ALTER TABLE api_keys ADD COLUMN expires_at INTEGER",
      // The secret before the last roll, accepted until rolled_until (see _sql/keys.ts).
      "ALTER TABLE api_keys ADD COLUMN previous_hash TEXT",
      "ALTER TABLE api_keys ADD COLUMN rolled_at INTEGER",
      "ALTER TABLE api_keys ADD COLUMN rolled_until INTEGER",
      "ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER",
      "CREATE INDEX api_keys_by_previous_hash ON api_keys (previous_hash) WHERE previous_hash IS NOT NULL",
      // AUTOINCREMENT: entries are numbered in the order they were recorded, never reused.
      `CREATE TABLE key_audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at INTEGER NOT NULL,
        action TEXT NOT NULL,
        key_id TEXT NOT NULL,
        actor TEXT NOT NULL,
        actor_from TEXT,
        details TEXT
      )`,
      "CREATE INDEX key_audit_by_key ON key_audit (key_id, id)",
      // The trail is only ever added to: an edit or a deletion fails, whoever tries it.
      "CREATE TRIGGER key_audit_never_updated BEFORE UPDATE ON key_audit BEGIN SELECT RAISE(ABORT, 'the audit trail is never edited'); END",
      "CREATE TRIGGER key_audit_never_deleted BEFORE DELETE ON key_audit BEGIN SELECT RAISE(ABORT, 'the audit trail is never edited'); END",
    ],
  },
  {
    version: 7,
    name: "deployment settings",
    statements: [
      // What every server on the database must agree on, recorded by the first (the binary's
      // `limiter`: where the rate limits live, so that no two servers split them).
      "CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL, changed_at INTEGER NOT NULL) WITHOUT ROWID",
    ],
  },
  {
    version: 8,
    name: "admin tokens",
    statements: [
      // The credentials of the binary's admin listener: their SHA-256 only (see core's admin/tokens.ts).
      "CREATE TABLE admin_tokens (id TEXT PRIMARY KEY, hash TEXT NOT NULL, label TEXT, created_at INTEGER NOT NULL, revoked_at INTEGER) WITHOUT ROWID",
    ],
  },
  {
    version: 9,
    name: "usage history",
    statements: [
      // Each key's requests by outcome, by minute and by UTC day (see _sql/usage.ts); swept by time.
      // The two tables are alike: one row per key and minute, one per key and UTC day.
      ...["key_usage_minutes", "key_usage_days"].flatMap((table) => [
        `CREATE TABLE ${table} (
          key_id TEXT NOT NULL,
          at INTEGER NOT NULL,
          admitted INTEGER NOT NULL,
          rate_limited INTEGER NOT NULL,
          banned INTEGER NOT NULL,
          unauthorized INTEGER NOT NULL,
          PRIMARY KEY (key_id, at)
        ) WITHOUT ROWID`,
        `CREATE INDEX ${table}_by_time ON ${table} (at)`,
      ]),
    ],
  },
  {
    version: 10,
    name: "scopes and allowed addresses of a key",
    statements: [
      // Comma-separated, read with the key in the one lookup (see _sql/keys.ts); NULL: every
      // scope, any address, which is what every key made before had.
      "ALTER TABLE api_keys ADD COLUMN scopes TEXT",
      "ALTER TABLE api_keys ADD COLUMN allow_from TEXT",
    ],
  },
  {
    version: 11,
    name: "accounts",
    statements: [
      // rowid order is the order accounts were made, as for keys.
      `CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        plan TEXT NOT NULL,
        per_minute INTEGER,
        per_day INTEGER,
        created_at INTEGER NOT NULL
      )`,
      "ALTER TABLE api_keys ADD COLUMN account_id TEXT",
      ...ACCOUNTS_UPGRADE,
    ],
  },
  {
    version: 12,
    name: "allowed addresses of an account",
    // Comma-separated, as a key's, read with each of its keys in the one lookup; NULL: any
    // address, which is what every account made before had.
    statements: ["ALTER TABLE accounts ADD COLUMN allow_from TEXT"],
  },
  { version: 13, name: "keys that follow their account", statements: [FOLLOWS_ACCOUNT_COLUMN] },
];

/**
 * The migrations' statements that make and change `rate_limits`, by version: what a Durable
 * Object applies to its own SQLite storage (durable-objects/petstore-rate-limiter.ts), which
 * holds that table alone and decides with the same statement.
 */
export const RATE_LIMITS_MIGRATIONS: readonly { version: number; statements: readonly string[] }[] = MIGRATIONS.map(
  ({ version, statements }) => ({
    version,
    statements: statements.filter((statement) => /\brate_limits\b/.test(statement)),
  }),
).filter(({ statements }) => statements.length > 0);

/** The columns the libSQL adapters' statements use, by table: what `checkLibsql` checks. */
export const LIBSQL_COLUMNS: RequiredColumns = { ...SQL_COLUMNS, pets_version: ["id", "version"] };

/**
 * Applies pending migrations, each in one write transaction together with its row in
 * `schema_migrations`. Safe when several processes start at once: the first to commit a
 * version wins; the others' attempt fails on that row's primary key and is rolled back. A
 * database already up to date is only read: a restart takes no write lock and waits for no fsync.
 * A database with a version this release does not know (a newer one migrated it) is refused.
 * @example await migrateLibsql(await connectLibsql({ url: "file:petstore.db" })); // or migrateLibsql({ client })
 */
export async function migrateLibsql(source: LibsqlSource): Promise<void> {
  const db = engineOf(source);
  const appliedVersions = async () =>
    new Set((await db.read("SELECT version FROM schema_migrations")).rows.map((row) => Number(row.version)));
  const tracked = await db.read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'");
  if (tracked.rows.length === 0) {
    await db.write([
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
    ]);
  }
  const applied = await appliedVersions();
  // A newer release's schema may lack what this one's statements need: refuse it whole.
  const newer = newerSchemaError(
    applied,
    MIGRATIONS.map((migration) => migration.version),
  );
  if (newer) throw newer;
  for (const migration of MIGRATIONS) {
    if (applied.has(migration.version)) continue;
    try {
      await db.write([
        // First, so that a concurrent migrator stops here before touching the schema.
        {
          sql: `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ${SQLITE_NOW})`,
          args: [migration.version, migration.name],
        },
        ...migration.statements,
      ]);
    } catch (error) {
      // Another process committed this version first: its schema is there, nothing to do.
      if (!(await appliedVersions()).has(migration.version)) throw error;
    }
  }
}
