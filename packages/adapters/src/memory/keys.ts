import {
  type AccountInsert,
  type AccountLimits,
  type AccountRecord,
  type AccountRules,
  type ApiKeyRecord,
  type ApiKeys,
  type AuditAction,
  type AuditEntry,
  type AuditNote,
  type KeyChange,
  type KeyInsert,
  keyRecordIs,
  type NewAccountRecord,
  type NewApiKeyRecord,
  ownAccountId,
  type PlanName,
} from "@petstore/core";
import { accountNote } from "../_account-note.js";
import { memoryUsage } from "./_usage.js";

export interface MemoryKeysOptions {
  /** Accounts there from the start, for `keys` to name. */
  accounts?: NewAccountRecord[];
  /**
   * Keys there from the start (each without an `accountId` in an account of its own; with one,
   * in that account of `accounts`). A key that names no account given, or that repeats one's id
   * or hash, is a mistake: thrown.
   */
  keys?: (Omit<ApiKeyRecord, "accountId"> & { accountId?: string })[];
  /** Unix ms: the clock of creations, rolls, revocations, the audit trail and usage sweeps (this process's). Default `Date.now`. */
  clock?: (() => number) | undefined;
}

/** A copy the caller may change without changing the store (`rolled` and the lists are objects too). */
const copyOf = (record: ApiKeyRecord): ApiKeyRecord => {
  const copy = { ...record };
  if (record.rolled) copy.rolled = { ...record.rolled };
  if (record.scopes) copy.scopes = [...record.scopes];
  if (record.allowFrom) copy.allowFrom = [...record.allowFrom];
  return copy;
};

/** A copy of an account the caller may change without changing the store (its ranges are an object too). */
const accountCopy = (account: AccountRecord): AccountRecord =>
  account.allowFrom ? { ...account, allowFrom: [...account.allowFrom] } : { ...account };

/** A key's or an account's plan and limits, without the limits it does not have. */
function limitsOf({
  plan,
  perMinute,
  perDay,
}: {
  plan: PlanName;
  perMinute?: number | undefined;
  perDay?: number | undefined;
}): AccountLimits {
  const limits: AccountLimits = { plan };
  if (perMinute !== undefined) limits.perMinute = perMinute;
  if (perDay !== undefined) limits.perDay = perDay;
  return limits;
}

/** The account made for a key: its plan and limits, named after its label or id. */
const accountOf = (record: AccountLimits & { label?: string; id?: string; name?: string }) => ({
  ...limitsOf(record),
  name: record.name ?? record.label ?? record.id ?? "",
});

/** Gives `target` exactly the plan and limits of `source`. */
function setLimits(target: AccountLimits, source: AccountLimits): void {
  target.plan = source.plan;
  for (const field of ["perMinute", "perDay"] as const) {
    if (source[field] === undefined) delete target[field];
    else target[field] = source[field];
  }
}

/** Sets `target`'s plan and limits (`null` or absent in `limits`: the plan's). */
function applyLimits(
  target: AccountLimits,
  changes: { plan?: PlanName | undefined; perMinute?: number | null | undefined; perDay?: number | null | undefined },
): void {
  if (changes.plan !== undefined) target.plan = changes.plan;
  for (const field of ["perMinute", "perDay"] as const) {
    const value = changes[field];
    if (value === null) delete target[field];
    else if (value !== undefined) target[field] = value;
  }
}

/** API key records, their audit trail and their usage history in memory, looked up by hash. */
export function memoryKeys(options: MemoryKeysOptions = {}): ApiKeys {
  const clock = options.clock ?? Date.now;
  const byId = new Map<string, ApiKeyRecord>();
  const accounts = new Map<string, AccountRecord>();
  const trail: AuditEntry[] = [];

  function audit(action: AuditAction, keyId: string, note: AuditNote | undefined) {
    if (note === undefined) return;
    trail.push({
      id: trail.length + 1,
      at: clock(),
      action,
      keyId,
      actor: { ...note.actor },
      ...(note.details && { details: structuredClone(note.details) }),
    });
  }

  const { usage, admittedToday } = memoryUsage(clock, (id, at) => {
    const record = byId.get(id);
    if (record && (record.lastUsedAt ?? 0) < at) record.lastUsedAt = at;
  });

  function insert(record: NewApiKeyRecord, note?: AuditNote): KeyInsert {
    for (const each of byId.values()) {
      if (each.id === record.id || each.hash === record.hash || each.rolled?.previousHash === record.hash)
        return { state: "duplicate" };
    }
    const own = ownAccountId(record.id);
    const accountId = record.accountId ?? own;
    if (accountId !== own && !accounts.has(accountId)) return { state: "no_account" };
    const createdAt = record.createdAt ?? clock();
    if (!accounts.has(accountId)) {
      const made = { ...accountOf(record), id: accountId, createdAt };
      accounts.set(accountId, made);
      audit("create", accountId, accountNote(note, made));
    }
    const stored = copyOf({ ...record, accountId, createdAt });
    byId.set(record.id, stored);
    audit("create", record.id, note);
    return { state: "inserted", record: read(stored) };
  }
  function insertAccount(record: NewAccountRecord, note?: AuditNote): AccountInsert {
    if (accounts.has(record.id)) return { state: "duplicate" };
    const stored = accountCopy({ ...record, createdAt: record.createdAt ?? clock() });
    accounts.set(record.id, stored);
    audit("create", record.id, note);
    return { state: "inserted", record: accountCopy(stored) };
  }

  for (const account of options.accounts ?? [])
    if (insertAccount(account).state === "duplicate")
      throw new Error(`memoryKeys: the account ${account.id} is given twice`);
  for (const record of options.keys ?? []) {
    const { state } = insert(record);
    if (state === "duplicate") throw new Error(`memoryKeys: the key ${record.id} repeats another's id or hash`);
    if (state === "no_account")
      throw new Error(
        `memoryKeys: the key ${record.id} is in the account ${record.accountId}, which accounts does not give`,
      );
  }

  /** A key as it is read: a copy, with its account's plan and limits when it follows the account. */
  function read(record: ApiKeyRecord): ApiKeyRecord {
    const copy = copyOf(record);
    if (!record.ownLimits) setLimits(copy, accounts.get(record.accountId)!);
    return copy;
  }

  /** The key, unless it is missing or revoked: then what the change found. */
  function changeable(id: string): ApiKeyRecord | Exclude<KeyChange, { state: "changed" | "rolling" }> {
    const record = byId.get(id);
    if (!record) return { state: "missing" };
    if (record.revokedAt !== undefined) return { state: "revoked", record: read(record) };
    return record;
  }

  return {
    insert: async (record, note) => insert(record, note),
    async findByHash(hash) {
      for (const record of byId.values()) {
        if (record.hash === hash || record.rolled?.previousHash === hash) {
          const { allowFrom, ...limits } = accounts.get(record.accountId)!;
          const account: AccountRules = limitsOf(limits);
          if (allowFrom) account.allowFrom = [...allowFrom];
          return { ...read(record), account };
        }
      }
      return undefined;
    },
    insertAccount: async (record, note) => insertAccount(record, note),
    getAccount: async (id) => {
      const account = accounts.get(id);
      return account && accountCopy(account);
    },
    async listAccounts(page) {
      const all = [...accounts.values()];
      const start = page?.afterId === undefined ? 0 : all.findIndex((account) => account.id === page.afterId) + 1;
      // After an account there is none: an empty page, as a list of keys answers.
      if (start === 0 && page?.afterId !== undefined) return [];
      return all
        .slice(start)
        .filter((account) => page?.plan === undefined || account.plan === page.plan)
        .slice(0, page?.limit)
        .map(accountCopy);
    },
    async countKeys(accountIds) {
      const counts = new Map(accountIds.map((id) => [id, 0]));
      for (const { accountId } of byId.values()) {
        const count = counts.get(accountId);
        if (count !== undefined) counts.set(accountId, count + 1);
      }
      return Object.fromEntries(counts);
    },
    async updateAccount(id, changes, note) {
      const account = accounts.get(id);
      if (!account) return { state: "missing" };
      applyLimits(account, changes);
      if (changes.name !== undefined) account.name = changes.name;
      if (changes.allowFrom === null) delete account.allowFrom;
      else if (changes.allowFrom !== undefined) account.allowFrom = [...changes.allowFrom];
      audit("update", id, note);
      return { state: "changed", record: accountCopy(account) };
    },
    get: async (id) => {
      const record = byId.get(id);
      return record && read(record);
    },
    async list(query) {
      if (!query) return [...byId.values()].map(read);
      const now = clock();
      const { plan, state, accountId, order = "created" } = query;
      // Map order is insertion order: a stable sort keeps it for ties.
      const ranked = [...byId.values()].sort(
        order === "lastUsed"
          ? (a, b) => (b.lastUsedAt ?? -1) - (a.lastUsedAt ?? -1)
          : order === "today"
            ? (a, b) => admittedToday(b.id, now) - admittedToday(a.id, now)
            : () => 0,
      );
      // The page starts after where that key is now, whatever its plan and state; no such key: an empty page.
      const after = query.afterId === undefined ? -1 : ranked.findIndex((record) => record.id === query.afterId);
      if (after === -1 && query.afterId !== undefined) return [];
      return ranked
        .slice(after + 1)
        .map(read)
        .filter(
          (record) =>
            (plan === undefined || record.plan === plan) &&
            (accountId === undefined || record.accountId === accountId) &&
            (!state || keyRecordIs(record, state, now)),
        )
        .slice(0, query.limit);
    },
    async update(id, changes, note) {
      const record = changeable(id);
      if ("state" in record) return record;
      for (const field of ["label", "expiresAt", "scopes", "allowFrom"] as const) {
        const value = changes[field];
        if (value === null) delete record[field];
        else if (value !== undefined) Object.assign(record, { [field]: Array.isArray(value) ? [...value] : value });
      }
      const { plan, perMinute, perDay } = changes;
      const limits = { plan, perMinute, perDay };
      const account = accounts.get(record.accountId)!;
      audit("update", id, note);
      if (changes.followAccount) delete record.ownLimits;
      else if (plan !== undefined || perMinute !== undefined || perDay !== undefined) {
        if (!record.ownLimits && record.accountId === ownAccountId(id)) {
          // A key that follows the account made for it leaves its plan and limits to that account.
          applyLimits(account, limits);
          audit("update", record.accountId, accountNote(note, limits));
        } else {
          // Caps of its own, over the ones it has: a key that followed its account starts from
          // the account's, or from a plan given.
          if (!record.ownLimits) setLimits(record, plan === undefined ? account : { plan });
          record.ownLimits = true;
          applyLimits(record, limits);
        }
      }
      return { state: "changed", record: read(record) };
    },
    async roll(id, hash, overlapMs, note) {
      const record = changeable(id);
      if ("state" in record) return record;
      const now = clock();
      if (record.rolled && record.rolled.until > now) return { state: "rolling", record: read(record) };
      record.rolled = { previousHash: record.hash, at: now, until: now + overlapMs };
      record.hash = hash;
      audit("roll", id, note);
      return { state: "changed", record: read(record) };
    },
    async revoke(id, note) {
      const record = changeable(id);
      if ("state" in record) return record;
      record.revokedAt = clock();
      audit("revoke", id, note);
      return { state: "changed", record: read(record) };
    },
    ...usage,
    audit: async (action, keyId, note) => audit(action, keyId, note),
    async auditTrail({ limit, beforeId, keyId, action, actor }) {
      const entries = trail.filter(
        (entry) =>
          (beforeId === undefined || entry.id < beforeId) &&
          (keyId === undefined || entry.keyId === keyId) &&
          (action === undefined || entry.action === action) &&
          (actor === undefined || entry.actor.who === actor),
      );
      return entries
        .reverse()
        .slice(0, limit)
        .map((entry) => structuredClone(entry));
    },
  };
}
