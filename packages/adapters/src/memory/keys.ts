import {
  type ApiKeyRecord,
  type ApiKeys,
  type AuditAction,
  type AuditEntry,
  type AuditNote,
  type KeyChange,
  type KeyInsert,
  keyRecordIs,
  type NewApiKeyRecord,
} from "@petstore/core";
import { memoryUsage } from "./_usage.js";

export interface MemoryKeysOptions {
  /** Keys there from the start. */
  keys?: ApiKeyRecord[];
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

/** API key records, their audit trail and their usage history in memory, looked up by hash. */
export function memoryKeys(options: MemoryKeysOptions = {}): ApiKeys {
  const clock = options.clock ?? Date.now;
  const byId = new Map<string, ApiKeyRecord>();
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
    const stored = copyOf({ ...record, createdAt: record.createdAt ?? clock() });
    byId.set(record.id, stored);
    audit("create", record.id, note);
    return { state: "inserted", record: copyOf(stored) };
  }
  for (const record of options.keys ?? []) insert(record);

  /** The key, unless it is missing or revoked: then what the change found. */
  function changeable(id: string): ApiKeyRecord | Exclude<KeyChange, { state: "changed" | "rolling" }> {
    const record = byId.get(id);
    if (!record) return { state: "missing" };
    if (record.revokedAt !== undefined) return { state: "revoked", record: copyOf(record) };
    return record;
  }

  return {
    insert: async (record, note) => insert(record, note),
    async findByHash(hash) {
      for (const record of byId.values()) {
        if (record.hash === hash || record.rolled?.previousHash === hash) return copyOf(record);
      }
      return undefined;
    },
    get: async (id) => {
      const record = byId.get(id);
      return record && copyOf(record);
    },
    async list(query) {
      if (!query) return [...byId.values()].map(copyOf);
      const now = clock();
      const { plan, state, order = "created" } = query;
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
        .filter((record) => (plan === undefined || record.plan === plan) && (!state || keyRecordIs(record, state, now)))
        .slice(0, query.limit)
        .map(copyOf);
    },
    async update(id, changes, note) {
      const record = changeable(id);
      if ("state" in record) return record;
      if (changes.plan !== undefined) record.plan = changes.plan;
      for (const field of ["perMinute", "perDay", "label", "expiresAt", "scopes", "allowFrom"] as const) {
        const value = changes[field];
        if (value === null) delete record[field];
        else if (value !== undefined) Object.assign(record, { [field]: Array.isArray(value) ? [...value] : value });
      }
      audit("update", id, note);
      return { state: "changed", record: copyOf(record) };
    },
    async roll(id, hash, overlapMs, note) {
      const record = changeable(id);
      if ("state" in record) return record;
      const now = clock();
      if (record.rolled && record.rolled.until > now) return { state: "rolling", record: copyOf(record) };
      record.rolled = { previousHash: record.hash, at: now, until: now + overlapMs };
      record.hash = hash;
      audit("roll", id, note);
      return { state: "changed", record: copyOf(record) };
    },
    async revoke(id, note) {
      const record = changeable(id);
      if ("state" in record) return record;
      record.revokedAt = clock();
      audit("revoke", id, note);
      return { state: "changed", record: copyOf(record) };
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
