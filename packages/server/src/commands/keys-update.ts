import { type KeyChanges, KeyRuleError } from "@petstore/core";
import type { ParsedArgs } from "../cli/parse-args.js";
import { UsageError } from "../cli/usage-error.js";
import type { Command } from "./_command.js";
import { DB_AND_LIMITER_HELP, noSuchKey, revokedKey, withDatabase } from "./_key-access.js";
import { allowFromFlag, expiresFlag, flagProblems, labelFlag, limitFlag, planFlag, scopesFlag } from "./_key-flags.js";
import { detailLines } from "./_key-text.js";
import { cliActor } from "./_options.js";

/** The changes the flags ask for; a usage mistake when they ask none, or ask two things of one field. */
function changesOf(args: ParsedArgs): KeyChanges {
  const {
    plan,
    "per-minute": perMinute,
    "per-day": perDay,
    label,
    expires,
    scopes,
    "allow-from": allowFrom,
  } = args.values;
  const changes: KeyChanges = {};
  if (plan !== undefined) changes.plan = planFlag(plan);
  if (perMinute !== undefined) changes.perMinute = limitFlag(perMinute, "--per-minute", true);
  if (perDay !== undefined) changes.perDay = limitFlag(perDay, "--per-day", true);
  if (label !== undefined && args.switches.has("no-label"))
    throw new UsageError("--label and --no-label contradict each other: give one");
  if (label !== undefined) changes.label = labelFlag(label);
  if (args.switches.has("no-label")) changes.label = null;
  if (expires !== undefined) changes.expiresAt = expiresFlag(expires, Date.now(), true);
  if (scopes !== undefined) changes.scopes = scopesFlag(scopes);
  if (allowFrom !== undefined) changes.allowFrom = allowFromFlag(allowFrom);
  if (args.switches.has("follow-account")) {
    if (plan !== undefined || perMinute !== undefined || perDay !== undefined)
      throw new UsageError(
        "--follow-account takes the account's plan and limits: give no --plan, --per-minute or --per-day with it",
      );
    changes.followAccount = true;
  }
  if (Object.keys(changes).length === 0)
    throw new UsageError(
      "nothing to change: give --plan, --per-minute, --per-day, --follow-account, --label, --no-label, --expires, --scopes or --allow-from",
    );
  return changes;
}

/** `petstore keys update <id>`: plan, limits, label, expiry, scopes, allowed ranges; the key itself stays the same. */
export const keysUpdateCommand: Command = {
  spec: {
    name: "keys update",
    flags: {
      plan: "value",
      "per-minute": "value",
      "per-day": "value",
      label: "value",
      "no-label": "switch",
      expires: "value",
      scopes: "value",
      "allow-from": "value",
      "follow-account": "switch",
      db: "value",
      limiter: "value",
      json: "switch",
    },
    positionals: ["id"],
  },
  usage:
    "petstore keys update <id> [--plan P] [--per-minute N|plan] [--per-day N|plan] [--follow-account] [--label TEXT | --no-label] [--expires ISO-8601|never] [--scopes S,...] [--allow-from CIDR,...|any] [--db URL] [--limiter URL] [--json]",
  help: `Changes an API key: its plan, its limits, its label, its expiry, its scopes or the addresses
it may be used from. The key (its secret) stays the same, and so does its usage today: an
upgrade counts what the key already used. Every server on the database applies the change
within 5 seconds. The change is recorded in the audit trail ('petstore audit') as made by
cli:USER@HOST. A revoked key takes no change.

  --plan NAME         free, pro, business or enterprise (an enterprise key needs limits of
                      its own: give --per-minute and --per-day unless it has them). A key
                      that follows the account made for it changes that account, and
                      every key following it; a key in a shared account gets caps of its
                      own (kept through the account's changes)
  --per-minute N      requests per minute for this key, overriding the plan's;
                      'plan' removes the override (the plan's limit again)
  --per-day N         requests per day for this key, the same way ('plan' removes it)
  --follow-account    drop the key's own caps: it follows its account's plan and limits again
  --label TEXT        a new label (1 to 100 characters)
  --no-label          removes the label
  --expires TIME      from this instant on the key is refused (401): ISO 8601 with its
                      offset, in the future, e.g. 2027-01-31T00:00:00Z; 'never' removes the expiry
  --scopes LIST       what the key may do from now on, comma-separated: pets:read,
                      pets:write, orders:read (all three: every scope again)
  --allow-from LIST   the CIDR ranges its requests must come from, comma-separated, IPv4
                      or IPv6 (10.0.0.0/8,2001:db8::/32); 'any' removes the allowlist
${DB_AND_LIMITER_HELP}
  --json          print the key after the change, as 'petstore keys show --json' prints it`,
  run: async (args, env, io) => {
    const id = args.positionals[0]!;
    const changes = changesOf(args);
    return withDatabase(args, env, io, { limiter: true }, async (access) => {
      let changed: Awaited<ReturnType<typeof access.life.update>>;
      try {
        changed = await access.life.update(id, changes, cliActor(env));
      } catch (error) {
        // A rule the key would break with these changes (an enterprise key without limits of its own).
        if (!(error instanceof KeyRuleError)) throw error;
        io.err(`petstore: ${flagProblems(error.details)} (${id} is unchanged)`);
        return 1;
      }
      if (changed.state === "missing") return noSuchKey(io, id);
      if (changed.state !== "changed") return revokedKey(io, id, changed.record.revokedAt!);
      const view = await access.view(changed.record);
      if (args.switches.has("json")) {
        if (access.noLimiter !== undefined) io.err(`petstore: usage unknown: ${access.noLimiter}`);
        io.out(JSON.stringify(view));
        return 0;
      }
      io.out(`Updated ${id}. Every server applies the change within 5 seconds.`);
      for (const line of detailLines(view, changed.record, Date.now(), access.noLimiter, io.program))
        io.out(`  ${line}`);
      return 0;
    });
  },
};
