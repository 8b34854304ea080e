import * as v from "valibot";
import { KEY_STATES } from "../keys/key-states.js";
import { labelProblem, MAX_KEY_LIMIT, MAX_ROLL_OVERLAP_MS, PLAN_NAMES, planProblem } from "../keys/rules.js";
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

/** Body of `POST /keys`. */
export const NewKeySchema = v.strictObject({
  plan: PlanSchema,
  perMinute: v.optional(KeyLimitSchema),
  perDay: v.optional(KeyLimitSchema),
  label: v.optional(LabelSchema),
  expiresAt: v.optional(InstantSchema),
});

/** Body of `PATCH /keys/{id}`: the fields to change; `null` removes an override, the label or the expiry. */
export const KeyChangesSchema = v.strictObject({
  plan: v.optional(PlanSchema),
  perMinute: v.optional(v.nullable(KeyLimitSchema)),
  perDay: v.optional(v.nullable(KeyLimitSchema)),
  label: v.optional(v.nullable(LabelSchema)),
  expiresAt: v.optional(v.nullable(InstantSchema)),
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

/** A key as the admin API shows it: never its secret nor its hash. */
export const KeyViewSchema = v.object({
  id: v.string(),
  plan: PlanSchema,
  perMinute: v.number(),
  perDay: v.number(),
  label: v.nullable(v.string()),
  createdAt: Iso,
  expiresAt: v.nullable(Iso),
  revokedAt: v.nullable(Iso),
  /** The latest request the key was identified on, as the servers record it: at most about 10 s late. */
  lastUsedAt: v.nullable(Iso),
  /** Every state the key is in now, at once: a key banned while rolled is both (`keyStates`). */
  states: v.array(v.picklist(KEY_STATES)),
  /** The last roll while its overlap runs: the old secret works until `until`. */
  rolling: v.nullable(v.object({ since: Iso, until: Iso })),
  /** From the rate limiter, when it can say: this minute's and today's requests, and a ban. */
  usage: v.nullable(v.object({ minute: WindowUsageSchema, day: WindowUsageSchema, bannedUntil: v.nullable(Iso) })),
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
