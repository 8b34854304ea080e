import { checkOptions } from "../_options-check.js";
import type { Actor, ApiKeyRecord, ApiKeys, IdempotencyStore, KeyChange, KeyChanges, RateLimiter } from "../ports.js";
import { auditDetails } from "./_audit-details.js";
import { asksOwnLimits, type KeyInAccountFields, keyInAccount } from "./account-life.js";
import { type IdempotencyRefusal, once, requestedId } from "./_once.js";
import { keyBucket, ownAccountId } from "./bucket.js";
import { insertApiKey, keptFields } from "./issue-api-key.js";
import { type KeyRoll, rollApiKey } from "./roll-api-key.js";
import { type KeyFields, KeyRuleError, keyChangesProblems, keptScopes } from "./rules.js";

export interface KeyLifeOptions {
  keys: ApiKeys;
  /** The limiter the servers count keys in: a ban is lifted there (`unban`). */
  limiter?: Pick<RateLimiter, "unban">;
  /** Where the Idempotency-Keys of creates and rolls are claimed; needed only when one is given. */
  idempotency?: IdempotencyStore;
  /** Unix ms: a new expiry must be after it (a slip guard; the key's instants are its store's). Default `Date.now`. */
  clock?: () => number;
  /**
   * Told the id of every key changed (updated, rolled, revoked), once the store has it: a
   * server passes its `forgetKey`, so that its own key cache applies the change at once
   * (other servers, within their key cache's bound).
   */
  onChange?: (keyId: string) => void;
}

/** Who asks for a change, and the Idempotency-Key of its request (a create's or a roll's), when it has one. */
export interface ChangeRequest {
  actor: Actor;
  idempotencyKey?: string;
}

export type { IdempotencyRefusal };

/** A request answered again: the key as it is now, without its secret, which is never kept. */
export interface Replayed {
  state: "replayed";
  record: ApiKeyRecord;
}

/**
 * What a new key asks: its fields and, to join an account, its `accountId` (its plan and limits
 * then the account's unless asked; see `keyInAccount`). Without one, a `plan`, and an account of its own.
 */
export type NewKeyInput = KeyInAccountFields & { accountId?: string };

export type KeyCreate =
  | { state: "created"; key: string; record: ApiKeyRecord }
  | Replayed
  | IdempotencyRefusal
  | { state: "no_account" };

export type KeyLifeRoll = KeyRoll | Replayed | IdempotencyRefusal;

/** What lifting a ban found: no such key, a limiter that cannot lift bans, or whether the key was banned. */
export type KeyUnban =
  | { state: "missing" }
  | { state: "unsupported" }
  | { state: "unbanned"; record: ApiKeyRecord }
  | { state: "not_banned"; record: ApiKeyRecord };

/** A key's life, from its creation to its revocation: what the admin API and the CLI call. */
export interface KeyLife {
  /**
   * A new key (shown once in `key`), in the account `accountId` (`no_account` when none has
   * it) or one of its own; a `KeyRuleError` names each field that breaks a rule.
   */
  create(input: NewKeyInput, request: ChangeRequest): Promise<KeyCreate>;
  /** Plan, limits, label, expiry, scopes, allowed addresses; the secret stays. A `KeyRuleError` names each change that breaks a rule. */
  update(id: string, changes: KeyChanges, actor: Actor): Promise<KeyChange>;
  /** A new secret; the old one works for `overlapMs` (0 to 7 days). */
  roll(id: string, overlapMs: number, request: ChangeRequest): Promise<KeyLifeRoll>;
  /** Refused from now on; revoking again keeps the first time (and answers `revoked`). */
  revoke(id: string, actor: Actor): Promise<KeyChange>;
  /** Its ban ends now, in the limiter: the next request is decided by its limits. */
  unban(id: string, actor: Actor): Promise<KeyUnban>;
}

/**
 * The one owner of a key's life: every rule of a key (its plan, the enterprise limits, labels,
 * an expiry in the future, a roll's overlap), the audit trail's words for each change, the
 * rate-limit bucket whose ban is lifted, and the replay of a create or a roll asked again with
 * the same Idempotency-Key (claimed in the `IdempotencyStore`, scoped to the actor). The admin
 * API and the CLI only turn HTTP and argv into its calls and its answers into theirs.
 * @example
 * const life = keyLife({ keys, limiter, idempotency, onChange: petstore.forgetKey });
 * const rolled = await life.roll("key_abc", 0, { actor: { who: "staff:ana" } });
 */
export function keyLife(options: KeyLifeOptions): KeyLife {
  checkOptions(
    "keyLife",
    options,
    { keys: ["get", "insert", "update", "roll", "revoke", "audit"] },
    "the ApiKeys port of your adapters, e.g. keyLife({ keys: adapters.keys, limiter, idempotency })",
  );
  const { keys, limiter, idempotency } = options;
  const clock = options.clock ?? Date.now;
  const changed = (outcome: { state: string }, id: string) => {
    if (outcome.state === "changed") options.onChange?.(id);
  };

  /** Runs `change` once under the request's Idempotency-Key, scoped to its actor (see `once`). */
  const onceFor = <T extends { state: string }>(
    request: ChangeRequest,
    asked: unknown,
    change: () => Promise<T>,
    replay: () => Promise<T | Replayed>,
  ) =>
    once<T, T | Replayed>(
      idempotency,
      { scope: `keys:${request.actor.who}`, key: request.idempotencyKey, asked },
      change,
      replay,
    );

  /** The key as it is now: a request's replay. */
  const now = async (id: string): Promise<Replayed> => {
    const record = await keys.get(id);
    if (!record) throw new Error(`The API key ${id} an Idempotency-Key's request made is gone`);
    return { state: "replayed", record };
  };

  return {
    async create(input, request) {
      const id =
        request.idempotencyKey === undefined
          ? undefined
          : await requestedId("key_", request.actor, request.idempotencyKey);
      const asked = { create: input };
      return onceFor<KeyCreate>(
        request,
        asked,
        async () => {
          const { accountId, ...fields } = input;
          const account = accountId === undefined ? undefined : await keys.getAccount(accountId);
          if (accountId !== undefined && !account) return { state: "no_account" };
          if (!account && fields.plan === undefined)
            throw new KeyRuleError([{ path: "plan", message: "is required unless the key joins an account" }]);
          const made = account ? keyInAccount(account, fields) : (fields as KeyFields);
          const inserted = await insertApiKey(keys, made, {
            now: clock(),
            actor: request.actor,
            ...(id !== undefined && { id }),
            ...(accountId !== undefined && { accountId }),
            ...(account && asksOwnLimits(fields) && { ownLimits: true as const }),
          });
          if (inserted.state === "inserted") return { state: "created", key: inserted.key, record: inserted.record };
          if (inserted.state === "no_account") return inserted;
          const replay = await now(id!);
          // Its first attempt made it, or (a day later) a request with another body: said so.
          const same =
            sameFields(replay.record, made) && (accountId ?? replay.record.accountId) === replay.record.accountId;
          return same ? replay : { state: "idempotency_key_reused" };
        },
        () => now(id!),
      );
    },

    async update(id, changes, actor) {
      const before = await keys.get(id);
      if (!before) return { state: "missing" };
      if (before.revokedAt !== undefined) return { state: "revoked", record: before };
      // A key that follows a shared account takes caps of its own from the plan given (see `KeyChanges`).
      const sharedAccount = !before.ownLimits && before.accountId !== ownAccountId(id);
      const base = sharedAccount && changes.plan !== undefined ? { plan: changes.plan } : before;
      const problems = keyChangesProblems(changes, base, clock());
      if (problems.length > 0) throw new KeyRuleError(problems);
      const kept = keptChanges(changes);
      const outcome = await keys.update(id, kept, { actor, details: auditDetails(kept) });
      changed(outcome, id);
      return outcome;
    },

    async roll(id, overlapMs, request) {
      const outcome = await onceFor<KeyRoll>(
        request,
        { roll: id, overlapMs },
        () => rollApiKey(keys, id, overlapMs, request.actor),
        () => now(id),
      );
      changed(outcome, id);
      return outcome;
    },

    async revoke(id, actor) {
      const outcome = await keys.revoke(id, { actor });
      changed(outcome, id);
      return outcome;
    },

    async unban(id, actor) {
      const record = await keys.get(id);
      if (!record) return { state: "missing" };
      if (!limiter?.unban) return { state: "unsupported" };
      if (!(await limiter.unban(keyBucket(id, record.accountId)))) return { state: "not_banned", record };
      await keys.audit("unban", id, { actor });
      return { state: "unbanned", record };
    },
  };
}

/** The key has what `input` asks: the same plan, limits, label and expiry. */
function sameFields(record: ApiKeyRecord, input: KeyFields): boolean {
  const kept = keptFields(input);
  return (["plan", "perMinute", "perDay", "label", "expiresAt", "scopes", "allowFrom"] as const).every(
    (field) => JSON.stringify(record[field]) === JSON.stringify(kept[field]),
  );
}

/** Changes as they are kept: scopes in their order, and every scope as `null` (the key's default again). */
function keptChanges(changes: KeyChanges): KeyChanges {
  if (changes.scopes === undefined || changes.scopes === null) return changes;
  return { ...changes, scopes: keptScopes(changes.scopes) ?? null };
}
