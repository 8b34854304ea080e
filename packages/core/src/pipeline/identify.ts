import { BoundedMap } from "../_bounded-map.js";
import { hashApiKey, isWellFormedApiKey } from "../keys/api-key.js";
import type { Settings } from "../options.js";
import type { ApiKeyRecord } from "../ports.js";

/** Why a key the store knows is refused: revoked, past its expiry, or a secret replaced by a roll whose overlap ended. */
export type RefusalReason = "revoked" | "expired" | "rolled_out";

/**
 * Who is calling: a valid key's record, or nobody (and whether a key was sent at all).
 * `keyCache`: the key was verified from the cache ("hit") or looked up in storage ("miss");
 * absent when no well-formed key was sent (nothing to look up). `oldSecret`: the caller sent
 * the secret its key had before its last roll, which works until the roll's overlap ends.
 * `refused`: a key the store knows, refused, and why (its id is never the caller's: the
 * request is answered 401).
 */
export type Identity =
  | { caller: ApiKeyRecord; keyCache: "hit" | "miss"; oldSecret?: true; refused?: never }
  | {
      caller: undefined;
      sentKey: boolean;
      keyCache?: "hit" | "miss";
      refused?: { keyId: string; reason: RefusalReason };
    };

/** Stage 1: the request's identity at `now`; `forget` drops what the key cache holds of a key. */
export interface Identify {
  (request: Request, now: number): Promise<Identity>;
  /** The key's next request is looked up in storage: a change made through this server applies at once. */
  forget(keyId: string): void;
}

const BEARER = /^bearer +(\S+) *$/i;
/** Verified keys remembered at once; past this many, the oldest is forgotten. */
const KEYS_KEPT = 10_000;
/** Longest header kept as a cache key: `Bearer ` and a key are 49 characters; padded variants are not kept. */
const CACHED_HEADER_LENGTH = 64;

/**
 * Stage 1, identify: `Authorization: Bearer <key>` resolved to a key record. A key with a bad
 * checksum is refused without touching storage; a revoked key is refused by its id. Verified
 * keys are remembered for `keyCacheMs` by the monotonic clock (`now`: the request's arrival by
 * it, so that no step of the wall clock lengthens it), which bounds how late a revocation made
 * by another process takes effect (one made through this process's `forget` applies at once;
 * an expiry and the end of a roll's overlap are exact: `lapse` checks them at the limiter's
 * instant).
 */
export function identifyStage(settings: Pick<Settings, "keys" | "keyCacheMs">): Identify {
  const { keys, keyCacheMs } = settings;
  const verified = new BoundedMap<string, { identity: Identity & { caller: ApiKeyRecord }; until: number }>(KEYS_KEPT);
  /** Counts `forget` calls: a lookup that began before one is not cached, for its record may be the one forgotten. */
  let forgotten = 0;

  const identify = async (request: Request, now: number): Promise<Identity> => {
    const header = request.headers.get("authorization");
    if (header === null) return { caller: undefined, sentKey: false };
    // Remembered by the header as sent, and only for verified keys: a hit needs no parsing and no checksum.
    const kept = verified.get(header);
    if (kept && kept.until > now) return kept.identity;
    const key = BEARER.exec(header)?.[1];
    // RFC 6750 section 3.1: another scheme (Basic...) is no bearer token, so no error code.
    if (key === undefined) return { caller: undefined, sentKey: /^bearer\b/i.test(header) };
    if (!isWellFormedApiKey(key)) return { caller: undefined, sentKey: true };
    const generation = forgotten;
    const hash = await hashApiKey(key);
    const record = await keys.findByHash(hash);
    if (!record) return { caller: undefined, sentKey: true, keyCache: "miss" };
    if (record.revokedAt !== undefined)
      return { caller: undefined, sentKey: true, keyCache: "miss", refused: { keyId: record.id, reason: "revoked" } };
    const oldSecret = record.hash !== hash ? ({ oldSecret: true } as const) : {};
    // The kept object says "hit" itself: a hit costs no object of its own.
    if (keyCacheMs > 0 && header.length <= CACHED_HEADER_LENGTH && generation === forgotten)
      verified.set(header, { identity: { caller: record, keyCache: "hit", ...oldSecret }, until: now + keyCacheMs });
    return { caller: record, keyCache: "miss", ...oldSecret };
  };
  return Object.assign(identify, {
    forget(keyId: string) {
      forgotten++;
      verified.deleteWhere(({ identity }) => identity.caller.id === keyId);
    },
  });
}
