import type { ApiKeyRecord, ApiKeys } from "@petstore/core";

/** API key records in memory, looked up by hash. */
export function memoryKeys(initial: ApiKeyRecord[] = []): ApiKeys {
  const byHash = new Map<string, ApiKeyRecord>();
  const byId = new Map<string, ApiKeyRecord>();
  const insert = (record: ApiKeyRecord) => {
    if (byId.has(record.id) || byHash.has(record.hash)) throw new Error(`Duplicate API key ${record.id}`);
    const copy = { ...record };
    byHash.set(copy.hash, copy);
    byId.set(copy.id, copy);
  };
  initial.forEach(insert);

  return {
    insert: async (record) => insert(record),
    findByHash: async (hash) => {
      const record = byHash.get(hash);
      return record && { ...record };
    },
    list: async () => [...byId.values()].map((record) => ({ ...record })),
    revoke: async (id, now) => {
      const record = byId.get(id);
      if (!record) return false;
      record.revokedAt ??= now;
      return true;
    },
  };
}
