import type { Actor, ApiKeyRecord, ApiKeys, KeyInsert, NewApiKeyRecord } from "../ports.js";
import { auditDetails } from "./_audit-details.js";
import { generateApiKey, hashApiKey, isWellFormedApiKey, randomBase62 } from "./api-key.js";
import { type KeyFields, KeyRuleError, keptScopes, newKeyProblems } from "./rules.js";

/** What a new key asks: its plan (`free`, `pro`, `business`, `enterprise`, which needs both limits), limits, label, expiry, scopes, allowed addresses. */
export type IssueApiKeyInput = KeyFields;

export interface IssueApiKeyOptions {
  /** Unix ms: an expiry must be after it. Defaults to `Date.now()`. The key's `createdAt` is its store's instant. */
  now?: number;
  /** Source of randomness, injectable for tests; returns `length` base62 characters. */
  random?: (length: number) => string;
  /** Store this well-formed key (see `generateApiKey`) instead of making a new one. */
  key?: string;
  /** Who makes it: its creation is then recorded in the audit trail, with what it sets. */
  actor?: Actor;
  /** Store it under this id (`key_` and 16 base62 characters) instead of a random one. */
  id?: string;
  /** The account it joins; without it, an account of its own is made with its plan and limits (see `NewApiKeyRecord`). */
  accountId?: string;
  /**
   * The key carries its plan and limits as caps of its own, kept through its account's changes;
   * without it, the key follows its account's (into an account given, its input's are unused).
   */
  ownLimits?: true;
}

/** A new key's fields as they are kept: its scopes in their order, none for every scope. */
export function keptFields(input: KeyFields): KeyFields {
  if (input.scopes === undefined) return input;
  const { scopes, ...rest } = input;
  const kept = keptScopes(scopes);
  return kept === undefined ? rest : { ...rest, scopes: kept };
}

/** Checks `input` and `options` and stores the key; `duplicate` when a key has its id or secret already. */
export async function insertApiKey(
  keys: Pick<ApiKeys, "insert">,
  input: IssueApiKeyInput,
  options: IssueApiKeyOptions,
): Promise<{ state: "inserted"; key: string; record: ApiKeyRecord } | Exclude<KeyInsert, { state: "inserted" }>> {
  if (typeof keys?.insert !== "function")
    throw new TypeError("issueApiKey needs the ApiKeys port first (adapters.keys, e.g. memoryKeys())");
  if (typeof input !== "object" || input === null)
    throw new TypeError('issueApiKey needs what the key is: { plan: "free" | "pro" | "business" | "enterprise", ... }');
  const problems = newKeyProblems(input, options.now ?? Date.now());
  if (options.key !== undefined && !isWellFormedApiKey(options.key))
    problems.push({ path: "key", message: "must be a well-formed psk_ key (see generateApiKey)" });
  if (problems.length > 0) throw new KeyRuleError(problems);
  const random = options.random ?? randomBase62;
  const key = options.key ?? generateApiKey(random);
  const record: NewApiKeyRecord = {
    id: options.id ?? `key_${random(16)}`,
    hash: await hashApiKey(key),
    plan: input.plan,
  };
  if (options.accountId !== undefined) record.accountId = options.accountId;
  if (options.ownLimits) record.ownLimits = true;
  const fields = keptFields(input);
  for (const field of ["perMinute", "perDay", "label", "expiresAt", "scopes", "allowFrom"] as const) {
    if (fields[field] !== undefined) Object.assign(record, { [field]: fields[field] });
  }
  const note = options.actor && { actor: options.actor, details: auditDetails(fields) };
  const inserted = await keys.insert(record, note);
  return inserted.state === "inserted" ? { ...inserted, key } : inserted;
}

/**
 * Creates a key, stores its hash, and returns the key: the only time it is ever visible.
 * Throws a `TypeError` (`KeyRuleError`) naming each field that breaks a key's rules, and an
 * `Error` when a key has the given `id` or `key` already.
 * @example const { key, record } = await issueApiKey(keys, { plan: "free", label: "ci" });
 */
export async function issueApiKey(
  keys: Pick<ApiKeys, "insert">,
  input: IssueApiKeyInput,
  options: IssueApiKeyOptions = {},
): Promise<{ key: string; record: ApiKeyRecord }> {
  const inserted = await insertApiKey(keys, input, options);
  if (inserted.state === "duplicate")
    throw new Error(
      `An API key is stored already with ${options.id === undefined ? "this secret" : `the id ${options.id} or this secret`}`,
    );
  if (inserted.state === "no_account") throw new Error(`No account has the id ${options.accountId}`);
  return { key: inserted.key, record: inserted.record };
}
