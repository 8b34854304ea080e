import {
  allowFromProblem,
  expiryProblem,
  instantOf,
  type KeyRuleError,
  labelProblem,
  MAX_KEY_LIMIT,
  MAX_ROLL_OVERLAP_MS,
  type PlanName,
  planProblem,
  type Scope,
  scopesProblem,
  USAGE_STEPS,
  type UsageStep,
} from "@petstore/core";
import { UsageError } from "../cli/usage-error.js";
import { integerSetting } from "./_options.js";

/**
 * The values of the keys commands' flags (`--plan`, `--per-minute`, `--label`, `--expires`,
 * `--overlap`...), each read into what core's key life takes, or a `UsageError` naming the
 * flag and the value. What a key may be is core's rule (`@petstore/core`'s key life): these
 * say its words after the flag's name.
 */

const DURATION = /^(\d{1,7})(s|m|h|d)$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** The flag of each field the key life names. */
const FLAGS: Record<string, string> = {
  name: "--name",
  plan: "--plan",
  perMinute: "--per-minute",
  perDay: "--per-day",
  label: "--label",
  expiresAt: "--expires",
  overlapMs: "--overlap",
  scopes: "--scopes",
  allowFrom: "--allow-from",
};

/** The rules of a key the key life found broken, as the CLI says them: each problem after its flag. */
export function flagProblems(problems: KeyRuleError["details"]): string {
  return problems.map(({ path, message }) => `${FLAGS[path] ?? path} ${message}`).join("; ");
}

export function planFlag(text: string): PlanName {
  const problem = planProblem(text);
  if (problem !== undefined) throw new UsageError(`--plan ${problem}, not '${text}'`);
  return text as PlanName;
}

/** `--per-minute N` or `--per-day N`; with `planWord`, `plan` too (null: the plan's own limit again). */
export function limitFlag(text: string, flag: string, planWord = false): number | null {
  if (planWord && text === "plan") return null;
  const hint = planWord ? " (or 'plan' for the plan's limit)" : "";
  try {
    return integerSetting(text, flag, 1, MAX_KEY_LIMIT);
  } catch (error) {
    throw new UsageError(`${(error as Error).message}${hint}`);
  }
}

export function labelFlag(text: string): string {
  const problem = labelProblem(text);
  if (problem !== undefined) throw new UsageError(`--label ${problem}`);
  return text;
}

/**
 * `--expires`: an instant after `now` (Unix ms); with `neverWord`, `never` too (null: no
 * expiry). An instant already past would refuse the key at once: a slip, said as one.
 */
export function expiresFlag(text: string, now: number, neverWord = false): number | null {
  if (neverWord && text === "never") return null;
  const instant = instantOf(text);
  if (instant === undefined) {
    const never = neverWord ? " or 'never'" : "";
    throw new UsageError(
      `--expires must be an ISO 8601 date and time with its offset, e.g. 2027-01-31T00:00:00Z${never}, not '${text}'`,
    );
  }
  const problem = expiryProblem(instant, now);
  if (problem !== undefined) throw new UsageError(`--expires ${problem}`);
  return instant;
}

/** The items of a comma-separated flag, each trimmed. */
const listOf = (text: string) => text.split(",").map((item) => item.trim());

/** `--scopes pets:read,orders:read`: what the key may do. */
export function scopesFlag(text: string): Scope[] {
  const scopes = listOf(text);
  const problem = scopesProblem(scopes);
  if (problem !== undefined) throw new UsageError(`--scopes ${problem}, comma-separated`);
  return scopes as Scope[];
}

/** `--allow-from 10.0.0.0/8,2001:db8::/32`: the ranges a key's (or an account's keys') requests must come from; `any`: null, from anywhere. */
export function allowFromFlag(text: string): string[] | null {
  if (text === "any") return null;
  const ranges = listOf(text);
  const problem = allowFromProblem(ranges);
  if (problem !== undefined) throw new UsageError(`--allow-from ${problem} (comma-separated), or 'any'`);
  return ranges;
}

/** `--overlap`: 0s to 7d as milliseconds (`0`, `90s`, `10m`, `12h`, `7d`). */
export function overlapFlag(text: string): number {
  const match = text === "0" ? ["0", "0", "s"] : DURATION.exec(text);
  const ms = match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : Number.NaN;
  if (!Number.isSafeInteger(ms))
    throw new UsageError(`--overlap must be a duration such as 0s, 60s, 10m, 12h or 7d, not '${text}'`);
  if (ms > MAX_ROLL_OVERLAP_MS)
    throw new UsageError(`--overlap must be at most 7d (the longest an old secret may keep working), not '${text}'`);
  return ms;
}

/** `--since`: how far back a usage read goes, as milliseconds (`90m`, `24h`, `30d`). */
export function sinceFlag(text: string): number {
  const match = DURATION.exec(text);
  const ms = match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : Number.NaN;
  if (!(Number.isSafeInteger(ms) && ms > 0))
    throw new UsageError(`--since must be a duration such as 90m, 24h or 30d, not '${text}'`);
  return ms;
}

/** `--step`: the buckets of a usage read. */
export function stepFlag(text: string): UsageStep {
  if (!(USAGE_STEPS as readonly string[]).includes(text))
    throw new UsageError(`--step must be one of ${USAGE_STEPS.join(", ")}, not '${text}'`);
  return text as UsageStep;
}
