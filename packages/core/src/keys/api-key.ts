import { sha256Hex } from "../_sha256.js";

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

/** `length` base62 characters from a hex digest: an id derived from something, not random. */
export function base62OfHex(hex: string, length: number): string {
  let out = "";
  for (let i = 0; out.length < length; i += 2) out += BASE62[Number.parseInt(hex.slice(i, i + 2), 16) % 62];
  return out;
}
