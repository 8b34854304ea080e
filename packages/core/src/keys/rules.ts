import { cidrProblem } from "../http/ip-addresses.js";
import type { ApiKeyRecord, KeyChanges, PlanName, Scope } from "../ports.js";
import type { ErrorDetail } from "../schemas.js";

/**
 * What a key may be: its plan, limits, label, expiry and a roll's overlap. The key life
 * (`issueApiKey`, `keyLife`) refuses anything else, and the admin API and the CLI say the
 * same words, the API as `details` of a `400`, the CLI after the flag's name.
 */

export const PLAN_NAMES: readonly PlanName[] = ["free", "pro", "business", "enterprise"];
/** Every scope, in the order a key's are kept and shown: a key has them all unless given fewer. */
export const SCOPES: readonly Scope[] = ["pets:read", "pets:write", "orders:read"];
/** The most CIDR ranges one key may carry: an allowlist, not a routing table. */
const MAX_ALLOW_FROM = 100;
/** The largest per-minute or per-day limit a key may have. */
export const MAX_KEY_LIMIT = 1_000_000_000;
/** The longest label, in characters (code points). */
const LABEL_MAX = 100;
/** The longest a rolled key's old secret may keep working: 7 days. */
export const MAX_ROLL_OVERLAP_MS = 7 * 24 * 3_600_000;

/** A key's fields that break a rule, each with why: thrown by the key life, a `TypeError` naming the field and the fix. */
export class KeyRuleError extends TypeError {
  constructor(readonly details: ErrorDetail[]) {
    super(details.map(({ path, message }) => `${path} ${message}`).join("; "));
    this.name = "KeyRuleError";
  }
}

const PLAN_PROBLEM = `must be one of ${PLAN_NAMES.join(", ")}`;
const LIMIT_PROBLEM = `must be a whole number from 1 to ${MAX_KEY_LIMIT}`;

/**
 * Why a label holds a character an operator's screen must not show: a control character
 * (Unicode Cc), which breaks a line or a terminal; a bidirectional embedding, override or
 * isolate (U+202A-U+202E, U+2066-U+2069), which makes a label read as another; a noncharacter
 * (U+FDD0-U+FDEF, the last two of every plane), which no text exchanged may hold; or a lone
 * surrogate, which is no UTF-16 and would be stored as U+FFFD, unlike what was sent.
 */
function characterProblem(label: string): string | undefined {
  for (const character of label) {
    const code = character.codePointAt(0)!;
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) return "must not contain control characters";
    if ((code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069))
      return "must not contain bidirectional control characters (U+202A to U+202E, U+2066 to U+2069)";
    if ((code >= 0xfdd0 && code <= 0xfdef) || (code & 0xfffe) === 0xfffe)
      return "must not contain Unicode noncharacters";
    if (code >= 0xd800 && code <= 0xdfff) return "must be valid UTF-16 (no lone surrogate)";
  }
  return undefined;
}

/** Why `label` cannot be a key's (or an admin token's) label; undefined when it can. */
export function labelProblem(label: unknown): string | undefined {
  if (typeof label !== "string") return "must be a string";
  if (label === "") return "must not be empty";
  if ([...label].length > LABEL_MAX) return `must be at most ${LABEL_MAX} characters`;
  return characterProblem(label);
}

/** Why `plan` is no plan; undefined when it is one. */
export function planProblem(plan: unknown): string | undefined {
  return PLAN_NAMES.includes(plan as PlanName) ? undefined : PLAN_PROBLEM;
}

/** Why `limit` cannot be a per-minute or per-day limit; undefined when it can. */
function limitProblem(limit: unknown): string | undefined {
  return Number.isSafeInteger(limit) && (limit as number) >= 1 && (limit as number) <= MAX_KEY_LIMIT
    ? undefined
    : LIMIT_PROBLEM;
}

/** Why `expiresAt` (Unix ms) cannot be a new expiry at `now`: one already past would refuse the key at once, a slip. */
export function expiryProblem(expiresAt: unknown, now: number): string | undefined {
  if (!Number.isSafeInteger(expiresAt)) return "must be an instant (Unix ms)";
  const at = expiresAt as number;
  return at > now ? undefined : `must be in the future, not ${iso(at)} (it is ${iso(now)})`;
}

/** Why `overlapMs` cannot be a roll's overlap; undefined when it can. */
export function overlapProblem(overlapMs: unknown): string | undefined {
  return Number.isSafeInteger(overlapMs) && (overlapMs as number) >= 0 && (overlapMs as number) <= MAX_ROLL_OVERLAP_MS
    ? undefined
    : `must be a whole number of milliseconds from 0 to ${MAX_ROLL_OVERLAP_MS} (7 days)`;
}

/** Why `scopes` cannot be a key's: one or more of `SCOPES`, each once; undefined when it can. */
export function scopesProblem(scopes: unknown): string | undefined {
  const known = `one or more of ${SCOPES.join(", ")}`;
  if (!Array.isArray(scopes) || scopes.length === 0) return `must be ${known}`;
  const unknown = scopes.find((scope) => !SCOPES.includes(scope as Scope));
  if (unknown !== undefined) return `must be ${known}, not '${String(unknown)}'`;
  return new Set(scopes).size === scopes.length ? undefined : "must name each scope once";
}

/**
 * A key's scopes as they are kept: in the order of `SCOPES`, and none at all (undefined) for
 * every scope, so that a key given all of them is the same as a key given none.
 */
export function keptScopes(scopes: readonly Scope[]): Scope[] | undefined {
  const kept = SCOPES.filter((scope) => scopes.includes(scope));
  return kept.length === SCOPES.length ? undefined : kept;
}

/**
 * Why `ranges` cannot be a key's allowlist: 1 to `MAX_ALLOW_FROM` CIDR ranges or addresses
 * (IPv4, IPv6); the first one that is none is named. Undefined when it can.
 */
export function allowFromProblem(ranges: unknown): string | undefined {
  if (!Array.isArray(ranges) || ranges.length === 0 || ranges.length > MAX_ALLOW_FROM)
    return `must be 1 to ${MAX_ALLOW_FROM} CIDR ranges such as 10.0.0.0/8 or 2001:db8::/32`;
  for (const range of ranges) {
    if (typeof range !== "string") return "must be CIDR ranges as strings, such as 10.0.0.0/8";
    const problem = cidrProblem(range);
    if (problem !== undefined) return `must be CIDR ranges: ${problem}`;
  }
  return undefined;
}

const iso = (ms: number) => (Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : String(ms));

/** What a new key asks: its plan, and what else it sets. */
export interface KeyFields {
  plan: PlanName;
  perMinute?: number;
  perDay?: number;
  label?: string;
  /** Unix ms from which the key is refused (by its store's clock). */
  expiresAt?: number;
  /** What it may do; absent, every scope. */
  scopes?: Scope[];
  /** The CIDR ranges its requests must come from; absent, any address. */
  allowFrom?: string[];
}

/** An enterprise key's numbers are agreed per key: the plan's fallback would sell them by accident. */
const ENTERPRISE_PROBLEM = "is required for an enterprise key (its limits are its own, not a plan's)";

/** Every rule a new key breaks, at `now` (for its expiry); none: it may be made. */
export function newKeyProblems(fields: KeyFields, now: number): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const add = (path: string, problem: string | undefined) => {
    if (problem !== undefined) problems.push({ path, message: problem });
  };
  add("plan", planProblem(fields.plan));
  for (const field of ["perMinute", "perDay"] as const) {
    if (fields[field] !== undefined) add(field, limitProblem(fields[field]));
    else if (fields.plan === "enterprise") add(field, ENTERPRISE_PROBLEM);
  }
  if (fields.label !== undefined) add("label", labelProblem(fields.label));
  if (fields.expiresAt !== undefined) add("expiresAt", expiryProblem(fields.expiresAt, now));
  if (fields.scopes !== undefined) add("scopes", scopesProblem(fields.scopes));
  if (fields.allowFrom !== undefined) add("allowFrom", allowFromProblem(fields.allowFrom));
  return problems;
}

/**
 * Every rule `changes` to the key `before` break, at `now`: each field as a new key's (`null`
 * removes one), and a change of plan or limits that would leave an enterprise key without
 * limits of its own.
 */
export function keyChangesProblems(
  changes: KeyChanges,
  before: Pick<ApiKeyRecord, "plan" | "perMinute" | "perDay">,
  now: number,
): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const add = (path: string, problem: string | undefined) => {
    if (problem !== undefined) problems.push({ path, message: problem });
  };
  if (changes.plan !== undefined) add("plan", planProblem(changes.plan));
  for (const field of ["perMinute", "perDay"] as const) {
    const change = changes[field];
    if (change !== undefined && change !== null) add(field, limitProblem(change));
  }
  if (changes.label !== undefined && changes.label !== null) add("label", labelProblem(changes.label));
  if (changes.expiresAt !== undefined && changes.expiresAt !== null)
    add("expiresAt", expiryProblem(changes.expiresAt, now));
  if (changes.scopes !== undefined && changes.scopes !== null) add("scopes", scopesProblem(changes.scopes));
  if (changes.allowFrom !== undefined && changes.allowFrom !== null)
    add("allowFrom", allowFromProblem(changes.allowFrom));
  const touchesLimits = changes.plan !== undefined || changes.perMinute !== undefined || changes.perDay !== undefined;
  if (touchesLimits && changes.followAccount)
    add("followAccount", "follows the account's plan and limits: give no plan or limits with it");
  if (touchesLimits && (changes.plan ?? before.plan) === "enterprise") {
    for (const field of ["perMinute", "perDay"] as const) {
      const after = changes[field] === undefined ? before[field] : changes[field];
      if (after === undefined || after === null) add(field, ENTERPRISE_PROBLEM);
    }
  }
  return problems;
}
