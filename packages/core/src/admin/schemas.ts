import * as v from "valibot";
import {
  allowFromProblem,
  labelProblem,
  MAX_KEY_LIMIT,
  MAX_ROLL_OVERLAP_MS,
  PLAN_NAMES,
  planProblem,
  SCOPES,
  scopesProblem,
} from "../keys/rules.js";
import type { AuditAction } from "../ports.js";

/**
 * The admin API's bodies, validated with valibot at the boundary; its OpenAPI document is
 * generated from the same schemas. Instants travel as ISO 8601 strings.
 */

/** ISO 8601 with a time and its offset: a date alone leaves the hour and the zone to guess. */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(:(\d{2})(\.\d{1,3})?)?(Z|[+-](\d{2}):(\d{2}))$/;

/**
 * The instant an ISO 8601 date and time with its offset names (`2027-01-31T00:00:00Z`), Unix
 * ms; undefined for any other text, and for a day or an hour that does not exist (which
 * `Date.parse` would move: 02-30 to 03-02). The admin API and the CLI read instants with it.
 */
export function instantOf(text: string): number | undefined {
  const match = INSTANT.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = [1, 2, 3, 4, 5, 7, 10, 11].map((i) =>
    Number(match[i] ?? 0),
  ) as [number, number, number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const real =
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetHours <= 23 &&
    offsetMinutes <= 59;
  return real ? Date.parse(text) : undefined;
}

const PlanSchema = v.picklist(PLAN_NAMES, (issue) => planProblem(issue.input)!);

const KeyLimitSchema = v.pipe(
  v.number("must be an integer"),
  v.integer("must be an integer"),
  v.minValue(1, "must be at least 1"),
  v.maxValue(MAX_KEY_LIMIT, `must be at most ${MAX_KEY_LIMIT}`),
);

const LabelSchema = v.pipe(
  v.string("must be a string"),
  v.check(
    (label) => labelProblem(label) === undefined,
    (issue) => labelProblem(issue.input)!,
  ),
  v.description(
    "1 to 100 characters, without control characters, bidirectional controls (U+202A-U+202E, U+2066-U+2069), noncharacters or lone surrogates",
  ),
);

/** An instant as ISO 8601 with its offset (`2027-01-31T00:00:00Z`), turned into Unix ms. */
const InstantSchema = v.pipe(
  v.string("must be an ISO 8601 date and time, e.g. 2027-01-31T00:00:00Z"),
  v.regex(INSTANT, "must be an ISO 8601 date and time with its offset, e.g. 2027-01-31T00:00:00Z"),
  v.check((text) => instantOf(text) !== undefined, "must be a date and time that exists"),
  v.transform((text) => instantOf(text)!),
);

const ScopesSchema = v.pipe(
  v.array(
    v.picklist(SCOPES, (issue) => scopesProblem([issue.input])!),
    (issue) => scopesProblem(issue.input)!,
  ),
  v.check(
    (scopes) => scopesProblem(scopes) === undefined,
    (issue) => scopesProblem(issue.input)!,
  ),
  v.description("What the key may do, each scope once; a key given none of these has every scope"),
);

/** An allowlist, a key's or an account's: the same rule, said in the same words. */
const RangesSchema = v.pipe(
  v.array(v.string(), (issue) => allowFromProblem(issue.input)!),
  v.check(
    (ranges) => allowFromProblem(ranges) === undefined,
    (issue) => allowFromProblem(issue.input)!,
  ),
);

const AllowFromSchema = v.pipe(
  RangesSchema,
  v.description(
    "CIDR ranges (IPv4, IPv6) the key's requests must come from, such as 10.0.0.0/8 or 2001:db8::/32; an address alone is a range of one",
  ),
);

const AccountAllowFromSchema = v.pipe(
  RangesSchema,
  v.description(
    "CIDR ranges (IPv4, IPv6) the requests of every key of the account must come from, such as 10.0.0.0/8 or 2001:db8::/32; a key with ranges of its own is served only from inside both",
  ),
);

/** An account's id as a body names it. */
const AccountIdSchema = v.pipe(
  v.string("must be an account's id (acct_...)"),
  v.regex(/^[A-Za-z0-9_]{1,64}$/, "must be an account's id (acct_...)"),
  v.description("The account the key joins: its plan and limits, unless the key gives its own"),
);

/** Body of `POST /keys`: a `plan`, or an `accountId` whose plan the key takes. */
export const NewKeySchema = v.strictObject({
  accountId: v.optional(AccountIdSchema),
  plan: v.optional(PlanSchema),
  perMinute: v.optional(KeyLimitSchema),
  perDay: v.optional(KeyLimitSchema),
  label: v.optional(LabelSchema),
  expiresAt: v.optional(InstantSchema),
  scopes: v.optional(ScopesSchema),
  allowFrom: v.optional(AllowFromSchema),
});

/**
 * Body of `PATCH /keys/{id}`: the fields to change; `null` removes an override, the label, the
 * expiry, the scopes (every scope again) or the allowlist (any address again).
 */
export const KeyChangesSchema = v.strictObject({
  plan: v.optional(PlanSchema),
  perMinute: v.optional(v.nullable(KeyLimitSchema)),
  perDay: v.optional(v.nullable(KeyLimitSchema)),
  label: v.optional(v.nullable(LabelSchema)),
  expiresAt: v.optional(v.nullable(InstantSchema)),
  scopes: v.optional(v.nullable(ScopesSchema)),
  allowFrom: v.optional(v.nullable(AllowFromSchema)),
  /** `true`: the key drops caps of its own and follows its account's plan and limits again (with no plan or limits beside it). */
  followAccount: v.optional(v.literal(true, "must be true (the key follows its account's plan and limits again)")),
});

/** Body of `POST /keys/{id}/roll`. */
export const RollSchema = v.strictObject({
  overlapSeconds: v.pipe(
    v.number("must be a whole number of seconds"),
    v.integer("must be a whole number of seconds"),
    v.minValue(0, "must be at least 0"),
    v.maxValue(MAX_ROLL_OVERLAP_MS / 1000, "must be at most 604800 (7 days)"),
  ),
});

const Iso = v.pipe(v.string(), v.isoTimestamp());
const WindowUsageSchema = v.object({ used: v.number(), limit: v.number(), resetAt: Iso });

/**
 * The states a key can be in, several at once: `active` (neither revoked nor expired: its
 * current secret works), `rolling` (a roll's overlap runs: its old secret works too), `banned`,
 * `expired`, `revoked`.
 */
export const KEY_STATES = ["active", "rolling", "banned", "expired", "revoked"] as const;
export type KeyState = (typeof KEY_STATES)[number];

/** A key as the admin API shows it: never its secret nor its hash. */
export const KeyViewSchema = v.object({
  id: v.string(),
  /** The account it belongs to: its requests count against the account's limits too. */
  accountId: v.string(),
  plan: PlanSchema,
  perMinute: v.number(),
  perDay: v.number(),
  label: v.nullable(v.string()),
  createdAt: Iso,
  expiresAt: v.nullable(Iso),
  revokedAt: v.nullable(Iso),
  /** The latest request the key was identified on, as the servers record it: at most about 10 s late. */
  lastUsedAt: v.nullable(Iso),
  /** What the key may do: every scope unless it was given fewer. */
  scopes: v.array(v.picklist(SCOPES)),
  /** The CIDR ranges its requests must come from; null: any address. */
  allowFrom: v.nullable(v.array(v.string())),
  /** The last roll while its overlap runs: the old secret works until `until`. */
  rolling: v.nullable(v.object({ since: Iso, until: Iso })),
  /** From the rate limiter, when it can say: this minute's and today's requests, and a ban. */
  usage: v.nullable(v.object({ minute: WindowUsageSchema, day: WindowUsageSchema, bannedUntil: v.nullable(Iso) })),
  /** Every state the key is in, in the order of `KEY_STATES` (`banned` only when the limiter can say). */
  states: v.array(v.picklist(KEY_STATES)),
});
export type KeyView = v.InferOutput<typeof KeyViewSchema>;

/** A created or rolled key: its view and, the only time it is ever shown, the key itself (null on a replay). */
export const KeyWithSecretSchema = v.object({ ...KeyViewSchema.entries, key: v.nullable(v.string()) });

/** Every action the audit trail records. */
export const AUDIT_ACTIONS = ["create", "update", "roll", "revoke", "unban"] as const satisfies readonly AuditAction[];

export const AuditEntrySchema = v.object({
  id: v.number(),
  at: Iso,
  action: v.picklist(AUDIT_ACTIONS),
  keyId: v.string(),
  actor: v.object({ who: v.string(), from: v.optional(v.string()) }),
  details: v.optional(v.record(v.string(), v.unknown())),
});

/** Body of `POST /tokens`. */
export const NewAdminTokenSchema = v.strictObject({ label: v.optional(LabelSchema) });

/** An admin token as the admin API shows it: never the token nor its hash. */
export const AdminTokenViewSchema = v.object({
  id: v.string(),
  label: v.nullable(v.string()),
  createdAt: Iso,
  revokedAt: v.nullable(Iso),
});

/** A created admin token: its view and, the only time it is ever shown, the token itself (null on a replay). */
export const AdminTokenWithSecretSchema = v.object({ ...AdminTokenViewSchema.entries, token: v.nullable(v.string()) });

/** Body of `POST /accounts`. */
export const NewAccountSchema = v.strictObject({
  name: LabelSchema,
  plan: PlanSchema,
  perMinute: v.optional(KeyLimitSchema),
  perDay: v.optional(KeyLimitSchema),
  allowFrom: v.optional(AccountAllowFromSchema),
});

/**
 * Body of `PATCH /accounts/{id}`: the fields to change; `null` gives a limit back to the plan,
 * or removes the allowlist (any address again).
 */
export const AccountChangesSchema = v.strictObject({
  name: v.optional(LabelSchema),
  plan: v.optional(PlanSchema),
  perMinute: v.optional(v.nullable(KeyLimitSchema)),
  perDay: v.optional(v.nullable(KeyLimitSchema)),
  allowFrom: v.optional(v.nullable(AccountAllowFromSchema)),
});

/** An account as the admin API shows it. */
export const AccountViewSchema = v.object({
  id: v.string(),
  name: v.string(),
  plan: PlanSchema,
  /** The limits its keys' requests count against together: its own, or its plan's. */
  perMinute: v.number(),
  perDay: v.number(),
  /** Whether `perMinute` or `perDay` is its own rather than its plan's. */
  ownLimits: v.boolean(),
  /** The CIDR ranges its keys' requests must come from (a key's own too, when it has some); null: any address. */
  allowFrom: v.nullable(v.array(v.string())),
  createdAt: Iso,
  /** How many keys it has, revoked and expired ones too. */
  keys: v.number(),
});
export type AccountView = v.InferOutput<typeof AccountViewSchema>;

/** A page of accounts: `nextCursor` (also in the `Link` header) asks for the next one; null on the last. */
export const AccountPageSchema = v.object({ accounts: v.array(AccountViewSchema), nextCursor: v.nullable(v.string()) });
