import { type AccountChanges, KeyRuleError, updateAccount } from "@petstore/core";
import { UsageError } from "../cli/usage-error.js";
import type { Command } from "./_command.js";
import { accountJson, accountLine, noSuchAccount } from "./_account-text.js";
import { accountsCreateCommand } from "./accounts-create.js";
import { withDatabase } from "./_key-access.js";
import { allowFromFlag, flagProblems, labelFlag, limitFlag, planFlag } from "./_key-flags.js";
import { cliActor } from "./_options.js";

/** `petstore accounts update <id>`: a new name, plan, limits or ranges; running servers apply them within 5 seconds. */
export const accountsUpdateCommand: Command = {
  spec: {
    name: "accounts update",
    // What an account is made with, it may be changed to.
    flags: accountsCreateCommand.spec.flags,
    positionals: ["id"],
  },
  usage:
    "petstore accounts update <id> [--name TEXT] [--plan P] [--per-minute N|plan] [--per-day N|plan] [--allow-from CIDR,...|any] [--db URL] [--json]",
  help: `Changes an account's name, plan, limits ('plan': the plan's limit again) or ranges. Its
keys that follow it take the new plan and limits; a key with caps of its own keeps them.
Every server applies the change within 5 seconds. Recorded in the audit trail.

  --allow-from LIST   CIDR ranges its keys' requests must come from, comma-separated, in place
                      of the old ones (a key with ranges of its own: inside both); 'any': from
                      any address again
  --db URL            file:PATH (default file:petstore.db), libsql://, postgres:// (env
                      PETSTORE_DB; PETSTORE_DB_AUTH_TOKEN, PGPASSWORD)
  --json              print the account after it, as 'petstore accounts show --json' prints it`,
  run: (args, env, io) => {
    const id = args.positionals[0]!;
    const { name, plan, "per-minute": perMinute, "per-day": perDay, "allow-from": allowFrom } = args.values;
    const changes: AccountChanges = {};
    if (name !== undefined) changes.name = labelFlag(name);
    if (plan !== undefined) changes.plan = planFlag(plan);
    if (perMinute !== undefined) changes.perMinute = limitFlag(perMinute, "--per-minute", true);
    if (perDay !== undefined) changes.perDay = limitFlag(perDay, "--per-day", true);
    if (allowFrom !== undefined) changes.allowFrom = allowFromFlag(allowFrom);
    if (Object.keys(changes).length === 0)
      throw new UsageError("nothing to change: give --name, --plan, --per-minute, --per-day or --allow-from");
    return withDatabase(args, env, io, { limiter: false }, async (access) => {
      const changed = await updateAccount(access.storage.adapters.keys, id, changes, cliActor(env)).catch(
        (error: unknown) => {
          if (error instanceof KeyRuleError) throw new UsageError(flagProblems(error.details));
          throw error;
        },
      );
      if (changed.state === "missing") return noSuchAccount(io, id);
      if (args.switches.has("json")) io.out(JSON.stringify(accountJson(changed.record)));
      else io.out(`Updated account ${accountLine(changed.record)}. Servers apply it within 5 seconds.`);
      return 0;
    });
  },
};
