import type { Actor, ApiKeyRecord, ApiKeys, KeyChange } from "../ports.js";
import { generateApiKey, hashApiKey } from "./api-key.js";
import { KeyRuleError, overlapProblem } from "./rules.js";

/** What a roll did: a new secret (`key`, shown this once) for the record, or what the store found instead. */
export type KeyRoll =
  | Exclude<KeyChange, { state: "changed" }>
  | { state: "changed"; record: ApiKeyRecord; key: string };

/**
 * Gives a key a new secret and returns it (the only time it is visible): the record, its
 * limits and its usage stay; the old secret keeps working for `overlapMs` (0 to 7 days), its
 * answers saying until when. The store answers what it found when it cannot (`missing`,
 * `revoked`, `rolling`: an earlier roll's overlap still runs). The roll is audited with its overlap.
 * @example const rolled = await rollApiKey(keys, "key_abc", 60_000, { who: "admin:tok_1" });
 */
export async function rollApiKey(
  keys: Pick<ApiKeys, "roll">,
  id: string,
  overlapMs: number,
  actor: Actor,
  options: { random?: (length: number) => string } = {},
): Promise<KeyRoll> {
  const problem = overlapProblem(overlapMs);
  if (problem !== undefined) throw new KeyRuleError([{ path: "overlapMs", message: problem }]);
  const key = generateApiKey(options.random);
  const rolled = await keys.roll(id, await hashApiKey(key), overlapMs, { actor, details: { overlapMs } });
  return rolled.state === "changed" ? { ...rolled, key } : rolled;
}
