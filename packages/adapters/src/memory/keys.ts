import type {
  ApiKeyRecord,
  ApiKeys,
  AuditAction,
  AuditEntry,
  AuditNote,
  KeyChange,
  KeyInsert,
  NewApiKeyRecord,
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
    async list(page) {
      const all = [...byId.values()];
      if (!page) return all.map(copyOf);
      const start = page.afterId === undefined ? 0 : all.findIndex((record) => record.id === page.afterId) + 1;
      return all.slice(start, start + page.limit).map(copyOf);
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
    ...memoryUsage(clock, (id, at) => {
      const record = byId.get(id);
      if (record && (record.lastUsedAt ?? 0) < at) record.lastUsedAt = at;
    }),
    audit: async (action, keyId, note) => audit(action, keyId, note),
    async auditTrail({ limit, beforeId, keyId }) {
      const entries = trail.filter(
        (entry) => (beforeId === undefined || entry.id < beforeId) && (keyId === undefined || entry.keyId === keyId),
      );
      return entries
        .reverse()
        .slice(0, limit)
        .map((entry) => structuredClone(entry));
    },
  };
}
