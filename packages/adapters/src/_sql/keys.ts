import type {
  AccountRecord,
  AccountRules,
  Actor,
  ApiKeyRecord,
  ApiKeys,
  AuditAction,
  AuditEntry,
  AuditNote,
  KeyChange,
  KeyRecordState,
  PlanName,
  Scope,
} from "@petstore/core";
import { ownAccountId } from "@petstore/core";
import { type Row, readOne, type SqlEngine, type Statement, type Value } from "./engine.js";

import { accountNote } from "../_account-note.js";
import { sqlUsage } from "./usage.js";

/** What differs between the SQL dialects for the key store's statements. */
export interface KeysDialect {
  /** Postgres inserts a change's audit row in the change's statement (a data-modifying CTE); SQLite in a second statement. */
  name: "sqlite" | "postgres";
  /** The placeholder of argument `n` (from 1): `?n` in SQLite, `$n::type` in Postgres. */
  arg(n: number, type: "text" | "bigint" | "integer"): string;
  /** The store's clock in SQL, Unix ms (see store-clock.ts). */
  now: string;
  /** The larger of two values: `max` in SQLite, `greatest` in Postgres. */
  greatest: string;
  /** The column that orders keys as they were made: `rowid`, `position`. */
  order: string;
  /** The driver's error for a duplicate id or hash. */
  isDuplicate(error: unknown): boolean;
  /**
   * The usage tallies bound at argument `n` (a JSON array of `[key_id, at, admitted,
   * rate_limited, banned, unauthorized, last_used_at]`) as a table of those columns, named `tallies`.
   */
  tallies(n: number): string;
}

const COLUMNS =
  "id, hash, plan, per_minute, per_day, label, created_at, revoked_at, expires_at, previous_hash, rolled_at, rolled_until, last_used_at, scopes, allow_from, account_id, follows_account";
const LIMIT_COLUMNS = ["plan", "per_minute", "per_day"];
/** A key as it is read: `api_keys AS k` with its account, `accounts AS acct`. */
const KEY_FROM = "api_keys AS k JOIN accounts AS acct ON acct.id = k.account_id";
/** A key's plan or limit as it counts: its account's when it follows the account, else its own. */
const counted = (column: string) => `CASE WHEN k.follows_account = 1 THEN acct.${column} ELSE k.${column} END`;
/** A key's columns as read from `KEY_FROM`. */
const KEY_COLUMNS = COLUMNS.split(", ")
  .map((column) => (LIMIT_COLUMNS.includes(column) ? `${counted(column)} AS ${column}` : `k.${column}`))
  .join(", ");
/** A key's columns with its account's plan and limits: a lookup's one read. */
const KEY_AND_ACCOUNT_COLUMNS = `${KEY_COLUMNS}, acct.plan AS account_plan, acct.per_minute AS account_per_minute, acct.per_day AS account_per_day, acct.allow_from AS account_allow_from`;
const ACCOUNT_COLUMNS = "id, name, plan, per_minute, per_day, created_at, allow_from";
const AUDIT_COLUMNS = "id, at, action, key_id, actor, actor_from, details";

const DAY = 86_400_000;

/** Each state of a key's record (see `KeyRecordState`, core's `keyRecordIs`) as a condition on row `k` at the instant `now()` (bound when asked for). */
const IN_STATE: Record<KeyRecordState, (now: () => string) => string> = {
  live: (now) => `k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ${now()})`,
  rolling: (now) => `k.revoked_at IS NULL AND k.rolled_until > ${now()}`,
  expired: (now) => `k.expires_at <= ${now()}`,
  revoked: () => "k.revoked_at IS NOT NULL",
};

const orNull = <T>(value: T | undefined): T | null => value ?? null;

/**
 * A key's or an account's list (its scopes, its ranges) as its column keeps it: the items
 * joined by commas, which none of them holds; NULL for none (every scope, any address).
 */
const listColumn = (list: readonly string[] | null | undefined): string | null => list?.join(",") ?? null;
/** A list column's items (a column that is not NULL). */
const listOf = (column: unknown): string[] => String(column).split(",");

function toRecord(row: Row): ApiKeyRecord {
  const record: ApiKeyRecord = {
    id: String(row.id),
    hash: String(row.hash),
    plan: row.plan as PlanName,
    accountId: String(row.account_id),
    createdAt: Number(row.created_at),
  };
  if (row.per_minute !== null) record.perMinute = Number(row.per_minute);
  if (row.per_day !== null) record.perDay = Number(row.per_day);
  if (row.label !== null) record.label = String(row.label);
  if (row.revoked_at !== null) record.revokedAt = Number(row.revoked_at);
  if (row.expires_at !== null) record.expiresAt = Number(row.expires_at);
  if (row.previous_hash !== null)
    record.rolled = {
      previousHash: String(row.previous_hash),
      at: Number(row.rolled_at),
      until: Number(row.rolled_until),
    };
  if (row.last_used_at !== null) record.lastUsedAt = Number(row.last_used_at);
  if (row.scopes !== null) record.scopes = listOf(row.scopes) as Scope[];
  if (row.allow_from !== null) record.allowFrom = listOf(row.allow_from);
  if (Number(row.follows_account) === 0) record.ownLimits = true;
  if (row.account_plan !== undefined) record.account = accountRules(row, "account_");
  return record;
}

/** An account's plan, limits and ranges, from its columns (named with `prefix` where a key's row joins them). */
function accountRules(row: Row, prefix: "" | "account_"): AccountRules {
  const rules: AccountRules = { plan: row[`${prefix}plan`] as PlanName };
  if (row[`${prefix}per_minute`] !== null) rules.perMinute = Number(row[`${prefix}per_minute`]);
  if (row[`${prefix}per_day`] !== null) rules.perDay = Number(row[`${prefix}per_day`]);
  if (row[`${prefix}allow_from`] !== null) rules.allowFrom = listOf(row[`${prefix}allow_from`]);
  return rules;
}

function toAccount(row: Row): AccountRecord {
  return { id: String(row.id), name: String(row.name), ...accountRules(row, ""), createdAt: Number(row.created_at) };
}

function toEntry(row: Row): AuditEntry {
  const actor: Actor = { who: String(row.actor) };
  if (row.actor_from !== null) actor.from = String(row.actor_from);
  const entry: AuditEntry = {
    id: Number(row.id),
    at: Number(row.at),
    action: row.action as AuditAction,
    keyId: String(row.key_id),
    actor,
  };
  if (row.details !== null) entry.details = JSON.parse(String(row.details)) as Record<string, unknown>;
  return entry;
}

/** `KeyChanges` field -> column, type. */
const CHANGEABLE = [
  ["plan", "plan", "text"],
  ["perMinute", "per_minute", "integer"],
  ["perDay", "per_day", "integer"],
  ["label", "label", "text"],
  ["expiresAt", "expires_at", "bigint"],
  ["scopes", "scopes", "text"],
  ["allowFrom", "allow_from", "text"],
] as const;
/** The plan and limits among them: a key's own caps, or its account's (see `update`). */
const LIMITS = CHANGEABLE.slice(0, 3) as readonly (typeof CHANGEABLE)[0 | 1 | 2][];

/**
 * API key records and their audit trail in a SQL database, shared by every process on it.
 * Each change is one conditional `UPDATE ... RETURNING` (so it cannot act on a key revoked or
 * rolled a moment before) and its audit row is inserted in the same transaction, only when the
 * update changed a row. Instants (a key's creation, a roll's, a revocation's, the trail's) are
 * the database's clock, or `clock`'s in tests. Core caches verified keys for at most 5 s, so a
 * change reaches every process within that.
 */
export function sqlKeys(db: SqlEngine, sql: KeysDialect, clock?: () => number): ApiKeys {
  const { arg } = sql;
  /** The instant, at argument `n`: the test's clock when it gives one, else the store's. */
  const nowAt = (n: number) => `coalesce(${arg(n, "bigint")}, ${sql.now})`;
  const instant = () => (clock ? clock() : null);

  /**
   * The audit row of a change, inserted only when the statement before it (in the same
   * transaction) changed a row: in SQLite `changes()`; Postgres inserts from the update's
   * `RETURNING` instead (see `changeAndAudit`).
   */
  const auditValues = (action: AuditAction, keyId: string, { actor, details }: AuditNote): Value[] => [
    instant(),
    action,
    keyId,
    actor.who,
    orNull(actor.from),
    details === undefined ? null : JSON.stringify(details),
  ];
  const AUDIT_INSERT = `INSERT INTO key_audit (at, action, key_id, actor, actor_from, details) VALUES (${nowAt(1)}, ${arg(2, "text")}, ${arg(3, "text")}, ${arg(4, "text")}, ${arg(5, "text")}, ${arg(6, "text")})`;

  /**
   * The statements of `change` (an `INSERT` or `UPDATE ... RETURNING` at most one row) and,
   * when it changed a row, its audit row, in one write: its row is the first statement's.
   * Postgres: one statement (the audit insert reads the change's result). SQLite: two, the
   * second guarded by `changes()`.
   */
  function audited(change: { sql: string; args: Value[] }, audit: Value[] | undefined): Statement[] {
    if (audit === undefined) return [{ ...change, oneRow: true }];
    const auditArgs = audit.map((_, i) => arg(change.args.length + 1 + i, i === 0 ? "bigint" : "text"));
    if (sql.name === "postgres")
      return [
        {
          sql: `WITH changed AS (${change.sql}),
          logged AS (INSERT INTO key_audit (at, action, key_id, actor, actor_from, details)
            SELECT coalesce(${auditArgs[0]}, ${sql.now}), ${auditArgs.slice(1).join(", ")} FROM changed)
          SELECT * FROM changed`,
          args: [...change.args, ...audit],
        },
      ];
    return [
      { ...change, oneRow: true },
      {
        sql: `INSERT INTO key_audit (at, action, key_id, actor, actor_from, details) SELECT ${nowAt(1)}, ${arg(2, "text")}, ${arg(3, "text")}, ${arg(4, "text")}, ${arg(5, "text")}, ${arg(6, "text")} WHERE changes() > 0`,
        args: audit,
      },
    ];
  }

  /** Runs `update` and its audit row (see `audited`) between `around`'s statements, in one write: the update's row. */
  async function changeAndAudit(
    update: { sql: string; args: Value[] },
    audit: Value[] | undefined,
    around: { before?: Statement[]; after?: Statement[] } = {},
  ): Promise<Row | undefined> {
    const { before = [], after = [] } = around;
    return (await db.write([...before, ...audited(update, audit), ...after]))[before.length]!.rows[0];
  }
  /** The statement that reads key `id` as it is read (see `KEY_COLUMNS`). */
  const readKey = (id: string): Statement => ({
    sql: `SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} WHERE k.id = ${arg(1, "text")}`,
    args: [id],
    oneRow: true,
  });
  /**
   * A change of key `id` (see `changeAndAudit`), the key read back in the same write: its
   * record after it, if it changed.
   */
  async function changeKey(
    id: string,
    update: { sql: string; args: Value[] },
    audit: Value[] | undefined,
    around: { before?: Statement[]; after?: Statement[] } = {},
  ): Promise<ApiKeyRecord | undefined> {
    const { before = [], after = [] } = around;
    const results = await db.write([...before, ...audited(update, audit), ...after, readKey(id)]);
    const read = results.at(-1)!.rows[0];
    return results[before.length]!.rows[0] && read && toRecord(read);
  }

  /** Why a change found nothing to change: no such key, a revoked one, or (for a roll) one still rolling. */
  async function refusal(id: string): Promise<KeyChange> {
    const record = await get(id);
    if (!record) return { state: "missing" };
    if (record.revokedAt !== undefined) return { state: "revoked", record };
    return { state: "rolling", record };
  }

  async function getAccount(id: string): Promise<AccountRecord | undefined> {
    return readOne(db, `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ${arg(1, "text")}`, [id], toAccount);
  }

  async function get(id: string): Promise<ApiKeyRecord | undefined> {
    const { rows } = await db.read(readKey(id));
    return rows[0] && toRecord(rows[0]);
  }

  return {
    async insert(record, note) {
      const values: Value[] = [
        record.id,
        record.hash,
        record.plan,
        orNull(record.perMinute),
        orNull(record.perDay),
        orNull(record.label),
        orNull(record.createdAt) ?? instant(),
        orNull(record.revokedAt),
        orNull(record.expiresAt),
        listColumn(record.scopes),
        listColumn(record.allowFrom),
        record.ownLimits ? 0 : 1,
      ];
      const types = [
        ...["text", "text", "text", "integer", "integer", "text", "bigint", "bigint", "bigint"],
        ...["text", "text", "integer"],
      ] as const;
      const placeholders = types.map((type, i) => (i === 6 ? nowAt(i + 1) : arg(i + 1, type)));
      const own = ownAccountId(record.id);
      const accountId = record.accountId ?? own;
      values.push(accountId);
      placeholders.push(arg(values.length, "text"));
      // A key without an account gets one of its own, with its plan and limits, in the same
      // write (unless the key is a duplicate: then nothing is written).
      // Audited under the account's id when it is made, as a key's write is.
      const name = record.label ?? record.id;
      const madeNote = accountNote(note, {
        name,
        plan: record.plan,
        perMinute: record.perMinute,
        perDay: record.perDay,
      });
      const made: Statement[] =
        accountId === own
          ? audited(
              {
                sql: `INSERT INTO accounts (id, name, plan, per_minute, per_day, created_at)
                  SELECT ${arg(1, "text")}, ${arg(2, "text")}, ${arg(3, "text")}, ${arg(4, "integer")}, ${arg(5, "integer")}, ${nowAt(6)}
                  WHERE NOT EXISTS (SELECT 1 FROM api_keys WHERE id = ${arg(7, "text")} OR hash = ${arg(8, "text")} OR previous_hash = ${arg(8, "text")})
                  ON CONFLICT (id) DO NOTHING RETURNING id`,
                args: [
                  accountId,
                  name,
                  record.plan,
                  orNull(record.perMinute),
                  orNull(record.perDay),
                  orNull(record.createdAt) ?? instant(),
                  record.id,
                  record.hash,
                ],
              },
              madeNote && auditValues("create", accountId, madeNote),
            )
          : [];
      try {
        const stored = await changeKey(
          record.id,
          {
            // A secret that is another key's previous one is a duplicate too: the unique index knows current hashes only.
            sql: `INSERT INTO api_keys (id, hash, plan, per_minute, per_day, label, created_at, revoked_at, expires_at, scopes, allow_from, follows_account, account_id)
              SELECT ${placeholders.join(", ")}
              WHERE NOT EXISTS (SELECT 1 FROM api_keys WHERE previous_hash = ${arg(2, "text")})
                AND EXISTS (SELECT 1 FROM accounts WHERE id = ${arg(values.length, "text")})
              RETURNING id`,
            args: values,
          },
          note && auditValues("create", record.id, note),
          { before: made },
        );
        if (stored) return { state: "inserted", record: stored };
        // Nothing written: a key had its id or a secret, or (else) its account is missing.
        if (accountId === own) return { state: "duplicate" };
        const { rows } = await db.read({
          sql: `SELECT 1 AS taken FROM api_keys WHERE id = ${arg(1, "text")} OR hash = ${arg(2, "text")} OR previous_hash = ${arg(2, "text")} LIMIT 1`,
          args: [record.id, record.hash],
        });
        return rows.length > 0 ? { state: "duplicate" } : { state: "no_account" };
      } catch (error) {
        if (sql.isDuplicate(error)) return { state: "duplicate" };
        throw error;
      }
    },
    async findByHash(hash) {
      // Revoked, expired and rolled-out secrets too: core refuses them, and says why.
      return readOne(
        db,
        `SELECT ${KEY_AND_ACCOUNT_COLUMNS} FROM ${KEY_FROM}
          WHERE k.hash = ${arg(1, "text")} OR k.previous_hash = ${arg(1, "text")} LIMIT 1`,
        [hash],
        toRecord,
      );
    },
    get,
    async insertAccount(account, note) {
      const row = await changeAndAudit(
        {
          sql: `INSERT INTO accounts (id, name, plan, per_minute, per_day, created_at, allow_from)
            VALUES (${arg(1, "text")}, ${arg(2, "text")}, ${arg(3, "text")}, ${arg(4, "integer")}, ${arg(5, "integer")}, ${nowAt(6)}, ${arg(7, "text")})
            ON CONFLICT (id) DO NOTHING RETURNING ${ACCOUNT_COLUMNS}`,
          args: [
            account.id,
            account.name,
            account.plan,
            orNull(account.perMinute),
            orNull(account.perDay),
            orNull(account.createdAt) ?? instant(),
            listColumn(account.allowFrom),
          ],
        },
        note && auditValues("create", account.id, note),
      );
      return row ? { state: "inserted", record: toAccount(row) } : { state: "duplicate" };
    },
    getAccount,
    async listAccounts(page) {
      if (!page)
        return (await db.read(`SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY ${sql.order}`)).rows.map(toAccount);
      const args: Value[] = [page.limit];
      const where: string[] = [];
      if (page.afterId !== undefined)
        where.push(
          `${sql.order} > (SELECT ${sql.order} FROM accounts WHERE id = ${arg(args.push(page.afterId), "text")})`,
        );
      if (page.plan !== undefined) where.push(`plan = ${arg(args.push(page.plan), "text")}`);
      const { rows } = await db.read({
        sql: `SELECT ${ACCOUNT_COLUMNS} FROM accounts ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
          ORDER BY ${sql.order} LIMIT ${arg(1, "integer")}`,
        args,
      });
      return rows.map(toAccount);
    },
    async countKeys(accountIds) {
      const counts = new Map(accountIds.map((id) => [id, 0]));
      if (accountIds.length === 0) return {};
      const { rows } = await db.read({
        sql: `SELECT account_id, count(*) AS keys FROM api_keys
          WHERE account_id IN (${accountIds.map((_, i) => arg(i + 1, "text")).join(", ")}) GROUP BY account_id`,
        args: [...accountIds],
      });
      for (const row of rows) counts.set(String(row.account_id), Number(row.keys));
      return Object.fromEntries(counts);
    },
    async updateAccount(id, changes, note) {
      // The account's name, plan, limits and ranges after the change, over its row as it is
      // (`a`), each statement binding only what it uses (PostgreSQL types every argument it is given).
      const after = (
        fields: readonly (readonly [
          "name" | "plan" | "perMinute" | "perDay" | "allowFrom",
          string,
          "text" | "integer",
        ])[],
      ) => {
        const args: Value[] = [id];
        const values = fields.map(([field, column, type]) => {
          const value = changes[field];
          if (value === undefined) return `a.${column}`;
          return arg(args.push(Array.isArray(value) ? listColumn(value) : value), type);
        });
        return { args, values };
      };
      const limits = [
        ["plan", "plan", "text"],
        ["perMinute", "per_minute", "integer"],
        ["perDay", "per_day", "integer"],
      ] as const;
      const account = after([["name", "name", "text"], ...limits, ["allowFrom", "allow_from", "text"]]);
      const [name, plan, perMinute, perDay, allowFrom] = account.values;
      const row = await changeAndAudit(
        {
          sql: `UPDATE accounts AS a SET name = ${name}, plan = ${plan}, per_minute = ${perMinute}, per_day = ${perDay}, allow_from = ${allowFrom}
            WHERE a.id = ${arg(1, "text")} RETURNING ${ACCOUNT_COLUMNS}`,
          args: account.args,
        },
        auditValues("update", id, note),
      );
      return row ? { state: "changed", record: toAccount(row) } : { state: "missing" };
    },
    async list(query) {
      if (!query)
        return (await db.read(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} ORDER BY k.${sql.order}`)).rows.map(toRecord);
      const { plan, state, afterId, accountId, order = "created" } = query;
      const args: Value[] = [query.limit];
      // The store's instant, bound once where the statement needs it (an unused argument is an error to Postgres and D1).
      let nowText: string | undefined;
      const now = () => (nowText ??= nowAt(args.push(instant())));
      /** The value `order` ranks a key by (row alias `row`), most first; none for `created`. */
      const rank = (row: string) =>
        order === "lastUsed"
          ? `coalesce(${row}.last_used_at, -1)`
          : `coalesce((SELECT day.admitted FROM key_usage_days AS day WHERE day.key_id = ${row}.id AND day.at = ${now()} - ${now()} % ${DAY}), 0)`;
      const where: string[] = [];
      if (plan !== undefined) where.push(`${counted("plan")} = ${arg(args.push(plan), "text")}`);
      if (accountId !== undefined) where.push(`k.account_id = ${arg(args.push(accountId), "text")}`);
      if (state !== undefined) where.push(IN_STATE[state](now));
      let from = KEY_FROM;
      if (afterId !== undefined) {
        // After where that key is now in the order, whatever its plan and state; no such key: an empty page.
        const at = arg(args.push(afterId), "text");
        from += ` CROSS JOIN (SELECT ${order === "created" ? "0" : rank("a")} AS v, a.${sql.order} AS o FROM api_keys AS a WHERE a.id = ${at}) AS after`;
        where.push(
          order === "created"
            ? `k.${sql.order} > after.o`
            : `(${rank("k")} < after.v OR (${rank("k")} = after.v AND k.${sql.order} > after.o))`,
        );
      }
      const { rows } = await db.read({
        sql: `SELECT ${KEY_COLUMNS} FROM ${from} ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
          ORDER BY ${order === "created" ? "" : `${rank("k")} DESC, `}k.${sql.order} LIMIT ${arg(1, "integer")}`,
        args,
      });
      return rows.map(toRecord);
    },
    async update(id, changes, note) {
      const own = ownAccountId(id);
      const args: Value[] = [id];
      const set: string[] = [];
      for (const [field, column, type] of CHANGEABLE) {
        const value = changes[field];
        if (value === undefined || LIMITS.some(([limit]) => limit === field)) continue;
        args.push(Array.isArray(value) ? listColumn(value) : value);
        set.push(`${column} = ${arg(args.length, type)}`);
      }
      const limits = LIMITS.filter(([field]) => changes[field] !== undefined);
      const account: { sql: string; args: Value[] } = { sql: "", args: [id, own] };
      if (changes.followAccount) set.push("follows_account = 1");
      else if (limits.length > 0) {
        // A key that follows the account made for it leaves its plan and limits to that
        // account (changed below); any other takes them as caps of its own, over the ones it
        // has: a key that followed its account starts from the account's, or from a plan given.
        const followsOwn = `(follows_account = 1 AND account_id = ${arg(args.push(own), "text")})`;
        for (const [field, column, type] of LIMITS) {
          const value = changes[field];
          const start =
            field === "plan" || changes.plan === undefined
              ? `(SELECT ${column} FROM accounts WHERE id = api_keys.account_id)`
              : "NULL";
          const cap =
            value === undefined
              ? `CASE WHEN follows_account = 1 THEN ${start} ELSE ${column} END`
              : arg(args.push(value), type);
          set.push(`${column} = CASE WHEN ${followsOwn} THEN ${column} ELSE ${cap} END`);
        }
        set.push(`follows_account = CASE WHEN ${followsOwn} THEN 1 ELSE 0 END`);
        const values = limits.map(
          ([field, column, type]) => `${column} = ${arg(account.args.push(changes[field]!), type)}`,
        );
        account.sql = `UPDATE accounts SET ${values.join(", ")} WHERE id = ${arg(2, "text")}
          AND EXISTS (SELECT 1 FROM api_keys WHERE id = ${arg(1, "text")} AND account_id = ${arg(2, "text")} AND follows_account = 1 AND revoked_at IS NULL)
          RETURNING id`;
      }
      // Nothing to change still answers what the key is (and audits the attempt as one).
      if (set.length === 0) set.push("plan = plan");
      const accountChange = accountNote(note, {
        plan: changes.plan,
        perMinute: changes.perMinute,
        perDay: changes.perDay,
      });
      const record = await changeKey(
        id,
        {
          sql: `UPDATE api_keys SET ${set.join(", ")} WHERE id = ${arg(1, "text")} AND revoked_at IS NULL RETURNING id`,
          args,
        },
        auditValues("update", id, note),
        // The account made for the key, changed in the same write, audited under its id.
        account.sql === ""
          ? {}
          : { after: audited(account, accountChange && auditValues("update", own, accountChange)) },
      );
      return record ? { state: "changed", record } : refusal(id);
    },
    async roll(id, hash, overlapMs, note) {
      const record = await changeKey(
        id,
        {
          // The right-hand sides read the row as it was: the current hash becomes the previous one.
          sql: `UPDATE api_keys SET previous_hash = hash, hash = ${arg(2, "text")}, rolled_at = ${nowAt(4)}, rolled_until = ${nowAt(4)} + ${arg(3, "bigint")}
            WHERE id = ${arg(1, "text")} AND revoked_at IS NULL AND (rolled_until IS NULL OR rolled_until <= ${nowAt(4)})
            RETURNING id`,
          args: [id, hash, overlapMs, instant()],
        },
        auditValues("roll", id, note),
      );
      return record ? { state: "changed", record } : refusal(id);
    },
    async revoke(id, note) {
      const record = await changeKey(
        id,
        {
          sql: `UPDATE api_keys SET revoked_at = ${nowAt(2)} WHERE id = ${arg(1, "text")} AND revoked_at IS NULL RETURNING id`,
          args: [id, instant()],
        },
        note && auditValues("revoke", id, note),
      );
      return record ? { state: "changed", record } : refusal(id);
    },
    ...sqlUsage(db, sql, clock),
    async audit(action, keyId, note) {
      await db.write([{ sql: AUDIT_INSERT, args: auditValues(action, keyId, note) }]);
    },
    async auditTrail({ limit, beforeId, keyId, action, actor }) {
      const where: string[] = [];
      const args: Value[] = [limit];
      if (beforeId !== undefined) where.push(`id < ${arg(args.push(beforeId), "bigint")}`);
      if (keyId !== undefined) where.push(`key_id = ${arg(args.push(keyId), "text")}`);
      if (action !== undefined) where.push(`action = ${arg(args.push(action), "text")}`);
      if (actor !== undefined) where.push(`actor = ${arg(args.push(actor), "text")}`);
      const { rows } = await db.read({
        sql: `SELECT ${AUDIT_COLUMNS} FROM key_audit ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT ${arg(1, "integer")}`,
        args,
      });
      return rows.map(toEntry);
    },
  };
}
