import type {
  AccountChange,
  AccountChanges,
  AccountLimits,
  AccountRecord,
  Actor,
  ApiKeys,
  IdempotencyStore,
  PlanName,
} from "../ports.js";
import { type IdempotencyRefusal, once, requestedId } from "./_once.js";
import { randomBase62 } from "./api-key.js";
import { type KeyFields, KeyRuleError, keyChangesProblems, labelProblem, newKeyProblems } from "./rules.js";

/**
 * What a new account is: a name, a plan (`enterprise` needs both limits) or limits of its own,
 * and the CIDR ranges its keys' requests must come from (absent, any address).
 */
export interface AccountInput {
  name: string;
  plan: AccountRecord["plan"];
  perMinute?: number;
  perDay?: number;
  allowFrom?: string[];
}

/** What an account's audit entry says it set: every field given, as given. */
const detailsOf = (fields: object): Record<string, unknown> => ({ ...fields });

/**
 * Creates an account (`acct_` and 16 base62 characters) and records it in the audit trail.
 * An account's plan, limits and ranges follow a key's rules (an enterprise account needs both
 * limits); its name a label's. Throws `KeyRuleError` naming each field that breaks them.
 * @example const account = await createAccount(keys, { name: "Shop", plan: "pro" }, { actor });
 */
export async function createAccount(
  keys: Pick<ApiKeys, "insertAccount">,
  input: AccountInput,
  options: { actor?: Actor; random?: (length: number) => string } = {},
): Promise<AccountRecord> {
  checkAccount(input);
  return insertNew(keys, `acct_${(options.random ?? randomBase62)(16)}`, input, options.actor);
}

/** Stores the account `id` (audited when an actor made it); an error when an account has that id. */
async function insertNew(
  keys: Pick<ApiKeys, "insertAccount">,
  id: string,
  input: AccountInput,
  actor: Actor | undefined,
): Promise<AccountRecord> {
  const inserted = await keys.insertAccount({ id, ...input }, actor && { actor, details: detailsOf(input) });
  if (inserted.state === "duplicate") throw new Error(`An account is stored already with the id ${id}`);
  return inserted.record;
}

/** Throws `KeyRuleError` naming each field of a new account that breaks a rule. */
function checkAccount(input: AccountInput): void {
  const { name, ...limits } = input;
  const problems = newKeyProblems(limits, 0);
  const nameProblem = labelProblem(name);
  if (nameProblem !== undefined) problems.unshift({ path: "name", message: nameProblem });
  if (problems.length > 0) throw new KeyRuleError(problems);
}

/** What a create under an Idempotency-Key did: made the account, found the one its first attempt made, or neither. */
export type AccountCreate =
  | { state: "created"; record: AccountRecord }
  | { state: "replayed"; record: AccountRecord }
  | IdempotencyRefusal;

/**
 * `createAccount` under an Idempotency-Key (claimed in `idempotency`, scoped to the actor), as
 * `keyLife`'s create: asked again with the same key and input, the account its first attempt
 * made (`replayed`, as it is now); with another input, `idempotency_key_reused`. The id is
 * derived from the actor and the key, so that a retry after a crash finds that account.
 * @example const made = await createAccountOnce(keys, idempotency, { name: "Shop", plan: "pro" }, { actor, idempotencyKey });
 */
export async function createAccountOnce(
  keys: Pick<ApiKeys, "insertAccount" | "getAccount">,
  idempotency: IdempotencyStore,
  input: AccountInput,
  request: { actor: Actor; idempotencyKey: string },
): Promise<AccountCreate> {
  checkAccount(input);
  const id = await requestedId("acct_", request.actor, request.idempotencyKey);
  const now = async () => {
    const record = await keys.getAccount(id);
    if (!record) throw new Error(`The account ${id} an Idempotency-Key's request made is gone`);
    return { state: "replayed" as const, record };
  };
  return once<AccountCreate, AccountCreate>(
    idempotency,
    { scope: `accounts:${request.actor.who}`, key: request.idempotencyKey, asked: { createAccount: input } },
    async () => {
      const note = { actor: request.actor, details: detailsOf(input) };
      const inserted = await keys.insertAccount({ id, ...input }, note);
      if (inserted.state === "inserted") return { state: "created", record: inserted.record };
      // Its first attempt made it (and its claim lapsed), or, a day later, a request with another input: said so.
      const replay = await now();
      const same = (["name", "plan", "perMinute", "perDay", "allowFrom"] as const).every(
        (field) => JSON.stringify(replay.record[field]) === JSON.stringify(input[field]),
      );
      return same ? replay : { state: "idempotency_key_reused" };
    },
    now,
  );
}

/**
 * Changes an account's name, plan, limits or ranges, audited; its keys that follow it take the
 * new plan and limits (see `ApiKeys.updateAccount`). Throws `KeyRuleError` as `createAccount`.
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

/** What a new key asks when it may join an account: its plan then comes from the account unless given. */
export type KeyInAccountFields = Omit<KeyFields, "plan"> & { plan?: PlanName };

/**
 * What a new key in `account` is: the account's plan and limits, unless the key asks its own
 * caps. A plan of its own caps it with that plan's limits, never the account's own numbers (a
 * Free test key in an Enterprise account has the Free limits). What `petstore keys create
 * --account` and the admin API's `POST /keys` with an `accountId` make.
 * @example const input = keyInAccount(account, { label: "staging", perMinute: 10 });
 */
export function keyInAccount(account: AccountLimits, asked: KeyInAccountFields): KeyFields {
  const fields: KeyFields = { plan: account.plan };
  if (asked.plan === undefined && account.perMinute !== undefined) fields.perMinute = account.perMinute;
  if (asked.plan === undefined && account.perDay !== undefined) fields.perDay = account.perDay;
  for (const [field, value] of Object.entries(asked))
    if (value !== undefined) Object.assign(fields, { [field]: value });
  return fields;
}

/**
 * Whether a new key in an account asks caps of its own (a plan or a limit): it then keeps them
 * through the account's changes (`ownLimits`); without, it follows the account.
 */
export const asksOwnLimits = (asked: KeyInAccountFields): boolean =>
  asked.plan !== undefined || asked.perMinute !== undefined || asked.perDay !== undefined;

/** The ids of every key of an account (revoked and expired ones too), in the order they were made, read a page at a time. */
export async function accountKeyIds(keys: Pick<ApiKeys, "list">, accountId: string): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const afterId = ids.at(-1);
    const page = await keys.list({ limit: KEY_PAGE, accountId, ...(afterId !== undefined && { afterId }) });
    ids.push(...page.map((record) => record.id));
    if (page.length < KEY_PAGE) return ids;
  }
}

const KEY_PAGE = 100;
