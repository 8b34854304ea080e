import { hashApiKey, isWellFormedApiKey } from "../api-keys.js";
import type { ApiKeyRecord, ApiKeys } from "../ports.js";

/**
 * Who is calling: a valid key's record, or nobody (and whether a key was sent at all).
 * `keyCache`: the key was verified from the cache ("hit") or looked up in storage ("miss");
 * absent when no well-formed key was sent (nothing to look up).
 */
export type Identity = { caller: ApiKeyRecord; keyCache: "hit" | "miss" } | { caller: undefined; sentKey: boolean; keyCache?: "miss" };

const BEARER = /^bearer +(\S+) *$/i;
const CACHE_LIMIT = 10_000;
/** Longest header kept as a cache key: `Bearer ` and a key are 49 characters; padded variants are not kept. */
const CACHED_HEADER_LENGTH = 64;

/**
 * Resolves `Authorization: Bearer <key>` to a key record. A key with a bad checksum is
 * refused without touching storage. Verified keys are cached for `cacheMs`, which bounds how
 * late a revocation made by another process takes effect.
 */
export function keyIdentifier(keys: ApiKeys, cacheMs: number) {
  const cache = new Map<string, { identity: Identity & { caller: ApiKeyRecord }; until: number }>();

  return async (request: Request, now: number): Promise<Identity> => {
    const header = request.headers.get("authorization");
    if (header === null) return { caller: undefined, sentKey: false };
    // Cached by the header as sent, and only for verified keys: a hit needs no parsing and no checksum.
    const cached = cache.get(header);
    if (cached && cached.until > now) return cached.identity;
    const key = BEARER.exec(header)?.[1];
    // RFC 6750 section 3.1: another scheme (Basic...) is no bearer token, so no error code.
    if (key === undefined) return { caller: undefined, sentKey: /^bearer\b/i.test(header) };
    if (!isWellFormedApiKey(key)) return { caller: undefined, sentKey: true };
    const record = await keys.findByHash(await hashApiKey(key));
    if (!record || record.revokedAt !== undefined) return { caller: undefined, sentKey: true, keyCache: "miss" };
    const identity = { caller: record, keyCache: "miss" as const };
    if (cacheMs > 0 && header.length <= CACHED_HEADER_LENGTH) {
      // Map keeps insertion order: dropping the first entry drops the oldest.
      if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
      cache.delete(header);
      // The cached object says so itself: a hit costs no object of its own.
      cache.set(header, { identity: { caller: record, keyCache: "hit" }, until: now + cacheMs });
    }
    return identity;
  };
}
