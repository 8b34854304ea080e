import type { Actor, ApiKeyRecord, ApiKeys, AuditAction, AuditEntry, KeyChange } from "@petstore/core";
import { memoryUsage } from "./_usage.js";

export interface MemoryKeysOptions {
  /** Keys there from the start. */
  keys?: ApiKeyRecord[];
  /** Unix ms: the clock of rolls, expiries, the audit trail and usage sweeps (this process's). Default `Date.now`. */
  clock?: (() => number) | undefined;
}

/** A copy the caller may change without changing the store (`rolled` is an object too). */
const copyOf = (record: ApiKeyRecord): ApiKeyRecord =>
  record.rolled ? { ...record, rolled: { ...record.rolled } } : { ...record };

/** API key records, their audit trail and their usage history in memory, looked up by hash. */
export function memoryKeys(options: MemoryKeysOptions = {}): ApiKeys {
  const clock = options.clock ?? Date.now;
  const byId = new Map<string, ApiKeyRecord>();
  const trail: AuditEntry[] = [];

  function audit(action: AuditAction, keyId: string, actor: Actor | undefined, details?: Record<string, unknown>) {
    if (actor === undefined) return;
    const { idempotency, ...who } = actor;
    const kept = idempotency ? { ...details, idempotency } : details;
    trail.push({
      id: trail.length + 1,
      at: clock(),
      action,
      keyId,
      actor: who,
      ...(kept && { details: structuredClone(kept) }),
    });
  }

  function insert(record: ApiKeyRecord, actor?: Actor) {
    for (const each of byId.values()) {
      if (each.id === record.id || each.hash === record.hash || each.rolled?.previousHash === record.hash)
        throw new Error(`Duplicate API key ${record.id}`);
    }
    byId.set(record.id, copyOf(record));
    audit("create", record.id, actor, { plan: record.plan });
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
    insert: async (record, actor) => insert(record, actor),
    async findByHash(hash) {
      const now = clock();
      for (const record of byId.values()) {
        const current = record.hash === hash || (record.rolled?.previousHash === hash && record.rolled.until > now);
        if (current) return record.expiresAt !== undefined && record.expiresAt <= now ? undefined : copyOf(record);
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
    async update(id, changes, actor) {
      const record = changeable(id);
      if ("state" in record) return record;
      if (changes.plan !== undefined) record.plan = changes.plan;
      for (const field of ["perMinute", "perDay", "label", "expiresAt"] as const) {
        const value = changes[field];
        if (value === null) delete record[field];
        else if (value !== undefined) Object.assign(record, { [field]: value });
      }
      audit("update", id, actor, { ...changes });
      return { state: "changed", record: copyOf(record) };
    },
    async roll(id, hash, overlapMs, actor) {
      const record = changeable(id);
      if ("state" in record) return record;
      const now = clock();
      if (record.rolled && record.rolled.until > now) return { state: "rolling", record: copyOf(record) };
      record.rolled = { previousHash: record.hash, at: now, until: now + overlapMs };
      record.hash = hash;
      audit("roll", id, actor, { overlapMs });
      return { state: "changed", record: copyOf(record) };
    },
    async revoke(id, actor) {
      const record = changeable(id);
      if ("state" in record) return record;
      record.revokedAt = clock();
      audit("revoke", id, actor);
      return { state: "changed", record: copyOf(record) };
    },
    ...memoryUsage(clock, (id, at) => {
      const record = byId.get(id);
      if (record && (record.lastUsedAt ?? 0) < at) record.lastUsedAt = at;
    }),
    audit: async (action, keyId, actor, details) => audit(action, keyId, actor, details),
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
