import { sha256Hex } from "../_sha256.js";
import { randomBase62 } from "../api-keys.js";
import type { AdminTokenRecord, AdminTokens } from "../ports.js";

/**
 * Admin tokens: `psa_` + 12 base62 characters naming the token (its id is `tok_` and those)
 * + 32 random base62 characters. Another prefix than API keys', so neither is ever taken for
 * the other (nor by a secret scanner); only the SHA-256 of a token is stored.
 */
const TOKEN = /^psa_([0-9A-Za-z]{12})[0-9A-Za-z]{32}$/;

/** True when `token` has the admin token's shape. */
export const isWellFormedAdminToken = (token: string): boolean => TOKEN.test(token);

/**
 * Makes a token, stores its hash, and returns it: the only time it is ever visible.
 * @example const { token } = await issueAdminToken(tokens, { label: "ops laptop" });
 */
export async function issueAdminToken(
  tokens: Pick<AdminTokens, "insert">,
  input: { label?: string } = {},
  options: { now?: number } = {},
): Promise<{ token: string; record: AdminTokenRecord }> {
  const name = randomBase62(12);
  const token = `psa_${name}${randomBase62(32)}`;
  const record: AdminTokenRecord = {
    id: `tok_${name}`,
    hash: await sha256Hex(token),
    createdAt: options.now ?? Date.now(),
  };
  if (input.label !== undefined) record.label = input.label;
  await tokens.insert(record);
  return { token, record };
}

/** Equal strings, compared in time that depends on their length only (never on where they first differ). */
function equalInConstantTime(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/**
 * The token's record when `token` is a live admin token; undefined otherwise. The record is
 * found by the id in the token, then the token's hash compared with the stored one in
 * constant time, so timing tells an attacker nothing of the secret.
 */
export async function verifyAdminToken(
  tokens: Pick<AdminTokens, "get">,
  token: string,
): Promise<AdminTokenRecord | undefined> {
  const name = TOKEN.exec(token)?.[1];
  if (name === undefined) return undefined;
  const [record, hash] = await Promise.all([tokens.get(`tok_${name}`), sha256Hex(token)]);
  if (!record || record.revokedAt !== undefined) return undefined;
  return equalInConstantTime(record.hash, hash) ? record : undefined;
}
