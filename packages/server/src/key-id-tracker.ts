import { type ApiKeys, hashApiKey, isWellFormedApiKey } from "@petstore/core";

const BEARER = /^bearer +(\S+) *$/i;
const LIMIT = 10_000;

/**
 * Lets the access log name the key behind a request without ever holding key material: the
 * returned `keys` port notes the id of every active key that storage finds by hash, and
 * `keyIdOf` hashes a request's bearer key and looks the id up there (no storage access).
 */
export function keyIdTracker(keys: ApiKeys): { keys: ApiKeys; keyIdOf: (request: Request) => Promise<string | undefined> } {
  const idByHash = new Map<string, string>();
  return {
    keys: {
      insert: (record) => keys.insert(record),
      list: () => keys.list(),
      revoke: (id, now) => keys.revoke(id, now),
      findByHash: async (hash) => {
        const record = await keys.findByHash(hash);
        idByHash.delete(hash);
        if (record && record.revokedAt === undefined) {
          // Map keeps insertion order: dropping the first entry drops the oldest.
          if (idByHash.size >= LIMIT) idByHash.delete(idByHash.keys().next().value!);
          idByHash.set(hash, record.id);
        }
        return record;
      },
    },
    keyIdOf: async (request) => {
      if (idByHash.size === 0) return undefined;
      const key = BEARER.exec(request.headers.get("authorization") ?? "")?.[1];
      if (key === undefined || !isWellFormedApiKey(key)) return undefined;
      return idByHash.get(await hashApiKey(key));
    },
  };
}
