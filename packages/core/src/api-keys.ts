import { sha256Hex } from "./_sha256.js";
import type { Actor, ApiKeyRecord, ApiKeys, KeyChange, PlanName } from "./ports.js";

/**
 * API keys: `psk_` + 32 random base62 characters + a 6-character base62 CRC-32 of those 32.
 * The checksum lets a typo be rejected without a storage lookup and lets secret scanners
 * recognise leaked keys; only the SHA-256 of a key is ever stored.
 */

const PREFIX = "psk_";
const BODY_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const KEY_PATTERN = /^psk_[0-9A-Za-z]{38}$/;

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function toBase62(value: number, width: number): string {
  let out = "";
  for (let i = 0; i < width; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

/** Random base62 text; rejection sampling keeps every character equally likely. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    // getRandomValues refuses more than 65,536 bytes at once.
    for (const byte of crypto.getRandomValues(new Uint8Array(Math.min(length * 2, 65_536)))) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** True when `key` has the `psk_` shape and its checksum matches. */
export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false;
  const body = key.slice(PREFIX.length, PREFIX.length + BODY_LENGTH);
  return key.slice(PREFIX.length + BODY_LENGTH) === toBase62(crc32(body), CHECKSUM_LENGTH);
}

/** Lowercase hex SHA-256 of a key: what storage holds and looks keys up by. */
export function hashApiKey(key: string): Promise<string> {
  return sha256Hex(key);
}

/**
 * A new well-formed key that is stored nowhere: for a key handed to a server by configuration
 * (a Worker's secret, the binary's `PETSTORE_BOOTSTRAP_KEY`) or made up by a test. `random`
 * gives its 32 base62 characters; cryptographically random by default.
 * @example const key = generateApiKey(); // "psk_" + 38 base62 characters
 */
export function generateApiKey(random: (length: number) => string = randomBase62): string {
  const body = random(BODY_LENGTH);
  return PREFIX + body + toBase62(crc32(body), CHECKSUM_LENGTH);
}

export interface IssueApiKeyInput {
  plan: PlanName;
  perMinute?: number;
  perDay?: number;
  label?: string;
  /** Unix ms from which the key is refused (by its store's clock). */
  expiresAt?: number;
}

export interface IssueApiKeyOptions {
  /** Unix ms; defaults to `Date.now()`. */
  now?: number;
  /** Source of randomness, injectable for tests; returns `length` base62 characters. */
  random?: (length: number) => string;
  /** Store this well-formed key (see `generateApiKey`) instead of making a new one. */
  key?: string;
  /** Who makes it: its creation is then recorded in the audit trail. */
  actor?: Actor;
  /** Store it under this id (`key_` and 16 base62 characters) instead of a random one. */
  id?: string;
}

/**
 * Creates a key, stores its hash, and returns the key: the only time it is ever visible.
 * @example const { key, record } = await issueApiKey(keys, { plan: "free", label: "ci" });
 */
export async function issueApiKey(
  keys: Pick<ApiKeys, "insert">,
  input: IssueApiKeyInput,
  options: IssueApiKeyOptions = {},
): Promise<{ key: string; record: ApiKeyRecord }> {
  if (input.plan === "enterprise" && (input.perMinute === undefined || input.perDay === undefined)) {
    throw new TypeError("An enterprise key needs perMinute and perDay limits");
  }
  for (const [name, value] of [
    ["perMinute", input.perMinute],
    ["perDay", input.perDay],
  ] as const) {
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 1)) {
      throw new TypeError(`${name} must be a positive integer`);
    }
  }
  if (options.key !== undefined && !isWellFormedApiKey(options.key))
    throw new TypeError("The key to store is not a well-formed psk_ key");
  const random = options.random ?? randomBase62;
  const key = options.key ?? generateApiKey(random);
  const record: ApiKeyRecord = {
    id: options.id ?? `key_${random(16)}`,
    hash: await hashApiKey(key),
    plan: input.plan,
    createdAt: options.now ?? Date.now(),
  };
  if (input.perMinute !== undefined) record.perMinute = input.perMinute;
  if (input.perDay !== undefined) record.perDay = input.perDay;
  if (input.label !== undefined) record.label = input.label;
  if (input.expiresAt !== undefined) record.expiresAt = input.expiresAt;
  await keys.insert(record, options.actor);
  return { key, record };
}

/** The longest a rolled key's old secret may keep working: 7 days. */
export const MAX_ROLL_OVERLAP_MS = 7 * 24 * 3_600_000;

/**
 * Gives a key a new secret and returns it (the only time it is visible): the record, its
 * limits and its usage stay; the old secret keeps working for `overlapMs` (0 to 7 days), its
 * answers saying until when. The store answers what it found when it cannot (`missing`,
 * `revoked`, `rolling`: an earlier roll's overlap still runs).
 * @example const rolled = await rollApiKey(keys, "key_abc", 60_000, { who: "admin:tok_1" });
 */
export async function rollApiKey(
  keys: Pick<ApiKeys, "roll">,
  id: string,
  overlapMs: number,
  actor: Actor,
  options: Pick<IssueApiKeyOptions, "random"> = {},
): Promise<Exclude<KeyChange, { state: "changed" }> | { state: "changed"; record: ApiKeyRecord; key: string }> {
  if (!(Number.isSafeInteger(overlapMs) && overlapMs >= 0 && overlapMs <= MAX_ROLL_OVERLAP_MS)) {
    throw new TypeError(`overlapMs must be a whole number of milliseconds from 0 to ${MAX_ROLL_OVERLAP_MS} (7 days)`);
  }
  const key = generateApiKey(options.random);
  const rolled = await keys.roll(id, await hashApiKey(key), overlapMs, actor);
  return rolled.state === "changed" ? { ...rolled, key } : rolled;
}
