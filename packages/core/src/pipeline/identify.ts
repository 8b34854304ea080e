import { BoundedMap } from "../_bounded-map.js";
import { hashApiKey, isWellFormedApiKey } from "../api-keys.js";
import type { Settings } from "../options.js";
import type { ApiKeyRecord } from "../ports.js";

/**
 * Who is calling: a valid key's record, or nobody (and whether a key was sent at all).
 * `keyCache`: the key was verified from the cache ("hit") or looked up in storage ("miss");
 * absent when no well-formed key was sent (nothing to look up). `oldSecret`: the caller sent
 * the secret its key had before its last roll, which works until the roll's overlap ends.
 */
export type Identity =
  | { caller: ApiKeyRecord; keyCache: "hit" | "miss"; oldSecret?: true }
  | { caller: undefined; sentKey: boolean; keyCache?: "miss" };

const BEARER = /^bearer +(\S+) *$/i;
/** Verified keys remembered at once; past this many, the oldest is forgotten. */
const KEYS_KEPT = 10_000;
/** Longest header kept as a cache key: `Bearer ` and a key are 49 characters; padded variants are not kept. */
const CACHED_HEADER_LENGTH = 64;

/**
 * Stage 1, identify: `Authorization: Bearer <key>` resolved to a key record. A key with a bad
 * checksum is refused without touching storage. Verified keys are remembered for
 * `keyCacheMs` by the monotonic clock (`now`: the request's arrival by it, so that no step of
 * the wall clock lengthens it), which bounds how late a revocation made by another process takes effect
 * (an expiry and the end of a roll's overlap are exact: `authorize` checks them at the
 * limiter's instant).
 */
export function identifyStage(
  settings: Pick<Settings, "keys" | "keyCacheMs">,
): (request: Request, now: number) => Promise<Identity> {
  const { keys, keyCacheMs } = settings;
  const verified = new BoundedMap<string, { identity: Identity & { caller: ApiKeyRecord }; until: number }>(KEYS_KEPT);

  return async (request, now) => {
    const header = request.headers.get("authorization");
    if (header === null) return { caller: undefined, sentKey: false };
    // Remembered by the header as sent, and only for verified keys: a hit needs no parsing and no checksum.
    const kept = verified.get(header);
    if (kept && kept.until > now) return kept.identity;
    const key = BEARER.exec(header)?.[1];
    // RFC 6750 section 3.1: another scheme (Basic...) is no bearer token, so no error code.
    if (key === undefined) return { caller: undefined, sentKey: /^bearer\b/i.test(header) };
    if (!isWellFormedApiKey(key)) return { caller: undefined, sentKey: true };
    const hash = await hashApiKey(key);
    const record = await keys.findByHash(hash);
    if (!record || record.revokedAt !== undefined) return { caller: undefined, sentKey: true, keyCache: "miss" };
    const oldSecret = record.hash !== hash ? ({ oldSecret: true } as const) : {};
    // The kept object says "hit" itself: a hit costs no object of its own.
    if (keyCacheMs > 0 && header.length <= CACHED_HEADER_LENGTH)
      verified.set(header, { identity: { caller: record, keyCache: "hit", ...oldSecret }, until: now + keyCacheMs });
    return { caller: record, keyCache: "miss", ...oldSecret };
  };
}
