import type { AdminTokenRecord, AdminTokens } from "@petstore/core";

/** Admin tokens in memory. `clock`: when a token is made and revoked (default `Date.now`). */
export function memoryAdminTokens(options: { clock?: (() => number) | undefined } = {}): AdminTokens {
  const clock = options.clock ?? Date.now;
  const byId = new Map<string, AdminTokenRecord>();
  return {
    async insert(record) {
      if (byId.has(record.id)) throw new Error(`Duplicate admin token ${record.id}`);
      const stored = { ...record, createdAt: clock() };
      byId.set(record.id, stored);
      return { ...stored };
    },
    get: async (id) => {
      const record = byId.get(id);
      return record && { ...record };
    },
    list: async () => [...byId.values()].map((record) => ({ ...record })),
    async revoke(id) {
      const record = byId.get(id);
      if (!record) return "missing";
      if (record.revokedAt !== undefined) return "already_revoked";
      record.revokedAt = clock();
      return "revoked";
    },
  };
}
