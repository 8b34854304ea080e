import { sha256Hex } from "../_sha256.js";
import { base62OfHex, randomBase62 } from "../keys/api-key.js";
import { KeyRuleError, labelProblem } from "../keys/rules.js";
import type { Actor, AdminTokenRecord, AdminTokens, ApiKeys } from "../ports.js";

/**
 * Admin tokens: `psa_` + 12 base62 characters naming the token (its id is `tok_` and those)
 * + 32 random base62 characters. Another prefix than API keys', so neither is ever taken for
 * the other (nor by a secret scanner); only the SHA-256 of a token is stored.
 */
const TOKEN = /^psa_([0-9A-Za-z]{12})[0-9A-Za-z]{32}$/;

/** True when `token` has the admin token's shape. */
export const isWellFormedAdminToken = (token: string): boolean => TOKEN.test(token);

/** The id of the token `token` names (`tok_` and its first part), known without its secret; undefined when it has not the shape. */
export function adminTokenId(token: string): string | undefined {
  const name = TOKEN.exec(token)?.[1];
  return name === undefined ? undefined : `tok_${name}`;
}

/** Where a change to an admin token is recorded: the keys' audit trail (under the token's id), as made by `actor`. */
export interface AdminTokenAudit {
  keys: Pick<ApiKeys, "audit">;
  actor: Actor;
}

/**
 * Makes a token, stores its hash, and returns it: the only time it is ever visible. Its label
 * follows a key's rules (a `KeyRuleError` says which it breaks); its creation is audited when
 * `audit` says where.
 * @example const { token } = await issueAdminToken(tokens, { label: "ops laptop" });
 */
export function issueAdminToken(
  tokens: Pick<AdminTokens, "insert">,
  input: { label?: string } = {},
  audit?: AdminTokenAudit,
): Promise<{ token: string; record: AdminTokenRecord }> {
  return makeAdminToken(tokens, randomBase62(12), input, audit);
}

/** The name (12 base62 characters) of the token an actor's request with this Idempotency-Key makes: a retry finds it. */
export const adminTokenNameFor = async (who: string, idempotencyKey: string) =>
  base62OfHex(await sha256Hex(`${who}\u0000${idempotencyKey}`), 12);

/** `issueAdminToken` of a token whose first part (its id's) is `name`. */
export async function makeAdminToken(
  tokens: Pick<AdminTokens, "insert">,
  name: string,
  input: { label?: string },
  audit?: AdminTokenAudit,
): Promise<{ token: string; record: AdminTokenRecord }> {
  if (input.label !== undefined) {
    const problem = labelProblem(input.label);
    if (problem !== undefined) throw new KeyRuleError([{ path: "label", message: problem }]);
  }
  const token = `psa_${name}${randomBase62(32)}`;
  const record = await tokens.insert({
    id: `tok_${name}`,
    hash: await sha256Hex(token),
    ...(input.label !== undefined && { label: input.label }),
  });
  await audit?.keys.audit("create", record.id, {
    actor: audit.actor,
    details: { adminToken: true, ...(input.label !== undefined && { label: input.label }) },
  });
  return { token, record };
}

/**
 * Revokes a token: the admin API refuses it from then on. Revoking twice keeps the first time
 * (`already_revoked`); the revocation is audited when `audit` says where.
 */
export async function revokeAdminToken(
  tokens: Pick<AdminTokens, "revoke">,
  id: string,
  audit?: AdminTokenAudit,
): Promise<"revoked" | "already_revoked" | "missing"> {
  const revoked = await tokens.revoke(id);
  if (revoked === "revoked")
    await audit?.keys.audit("revoke", id, { actor: audit.actor, details: { adminToken: true } });
  return revoked;
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
  const id = adminTokenId(token);
  if (id === undefined) return undefined;
  const [record, hash] = await Promise.all([tokens.get(id), sha256Hex(token)]);
  if (!record || record.revokedAt !== undefined) return undefined;
  return equalInConstantTime(record.hash, hash) ? record : undefined;
}
