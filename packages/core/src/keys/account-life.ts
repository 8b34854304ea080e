import type { AccountChange, AccountChanges, AccountRecord, Actor, ApiKeys } from "../ports.js";
import { randomBase62 } from "./api-key.js";
import { KeyRuleError, keyChangesProblems, labelProblem, newKeyProblems } from "./rules.js";

/** What a new account is: a name, and a plan (`enterprise` needs both limits) or limits of its own. */
export interface AccountInput {
  name: string;
  plan: AccountRecord["plan"];
  perMinute?: number;
  perDay?: number;
}

/** What an account's audit entry says it set: every field given, as given. */
const detailsOf = (fields: object): Record<string, unknown> => ({ ...fields });

/**
 * Creates an account (`acct_` and 16 base62 characters) and records it in the audit trail.
 * An account's plan and limits follow a key's rules (an enterprise account needs both limits);
 * its name a label's. Throws `KeyRuleError` naming each field that breaks them.
 * @example const account = await createAccount(keys, { name: "Shop", plan: "pro" }, { actor });
 */
export async function createAccount(
  keys: Pick<ApiKeys, "insertAccount">,
  input: AccountInput,
  options: { actor?: Actor; random?: (length: number) => string } = {},
): Promise<AccountRecord> {
  const { name, ...limits } = input;
  const problems = newKeyProblems(limits, 0);
  const nameProblem = labelProblem(name);
  if (nameProblem !== undefined) problems.unshift({ path: "name", message: nameProblem });
  if (problems.length > 0) throw new KeyRuleError(problems);
  const id = `acct_${(options.random ?? randomBase62)(16)}`;
  const note = options.actor && { actor: options.actor, details: detailsOf(input) };
  const inserted = await keys.insertAccount({ id, ...input }, note);
  if (inserted.state === "duplicate") throw new Error(`An account is stored already with the id ${id}`);
  return inserted.record;
}

/**
 * Changes an account's name, plan or limits, audited; its keys that follow it take the new
 * ones (see `ApiKeys.updateAccount`). Throws `KeyRuleError` as `createAccount`.
 */
export async function updateAccount(
  keys: Pick<ApiKeys, "getAccount" | "updateAccount">,
  id: string,
  changes: AccountChanges,
  actor: Actor,
): Promise<AccountChange> {
  const before = await keys.getAccount(id);
  if (!before) return { state: "missing" };
  const { name, ...limits } = changes;
  const problems = keyChangesProblems(limits, before, 0);
  const nameProblem = name === undefined ? undefined : labelProblem(name);
  if (nameProblem !== undefined) problems.unshift({ path: "name", message: nameProblem });
  if (problems.length > 0) throw new KeyRuleError(problems);
  return keys.updateAccount(id, changes, { actor, details: detailsOf(changes) });
}
