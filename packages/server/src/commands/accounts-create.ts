import { createAccount, KeyRuleError } from "@petstore/core";
import { storageFailure } from "../storage/open-storage.js";
import { UsageError } from "../cli/usage-error.js";
import type { Command } from "./_command.js";
import { accountJson, accountLine } from "./_account-text.js";
import { storedLine, withCredentialDatabase } from "./_database-file.js";
import { allowFromFlag, flagProblems, labelFlag, limitFlag, planFlag } from "./_key-flags.js";
import { cliActor, dbConfig } from "./_options.js";

/** `petstore accounts create`: an account whose plan its keys' requests count against together. */
export const accountsCreateCommand: Command = {
  spec: {
    name: "accounts create",
    flags: {
      name: "value",
      plan: "value",
      "per-minute": "value",
      "per-day": "value",
      "allow-from": "value",
      db: "value",
      json: "switch",
    },
    positionals: [],
  },
  usage:
    "petstore accounts create --name TEXT --plan free|pro|business|enterprise [--per-minute N] [--per-day N] [--allow-from CIDR,...] [--db URL] [--json]",
  help: `Creates an account: a customer whose keys' requests count together against its plan's
limits (each key may also carry smaller caps of its own). Add keys with
'petstore keys create --account <id>'. The creation is recorded in the audit trail.

  --name TEXT       what the account is called, shown in 'petstore accounts list'
  --plan NAME       free (60/min, 1000/day), pro (300/10000), business (1000/100000),
                    or enterprise (needs --per-minute and --per-day)
  --per-minute N    requests per minute for all its keys together, overriding the plan's
  --per-day N       requests per day for all its keys together, overriding the plan's
  --allow-from LIST CIDR ranges its keys' requests must come from, comma-separated, IPv4 or
                    IPv6 (10.0.0.0/8,2001:db8::/32); a key with ranges of its own is served
                    only from inside both; from elsewhere 403 address_not_allowed. Default
                    (or 'any'): any address
  --db URL          file:PATH (default file:petstore.db; made when missing), libsql://,
                    postgres:// (env PETSTORE_DB; PETSTORE_DB_AUTH_TOKEN, PGPASSWORD)
  --json            print one JSON object: id, name, plan, perMinute, perDay, createdAt, allowFrom`,
  run: async (args, env, io) => {
    const { name, plan, "per-minute": perMinute, "per-day": perDay, "allow-from": allowFrom } = args.values;
    if (name === undefined) throw new UsageError("--name is required");
    if (plan === undefined) throw new UsageError("--plan is required (free, pro, business or enterprise)");
    const input = { name: labelFlag(name), plan: planFlag(plan) } as Parameters<typeof createAccount>[1];
    if (perMinute !== undefined) input.perMinute = limitFlag(perMinute, "--per-minute")!;
    if (perDay !== undefined) input.perDay = limitFlag(perDay, "--per-day")!;
    const ranges = allowFrom === undefined ? null : allowFromFlag(allowFrom);
    if (ranges !== null) input.allowFrom = ranges;
    const db = dbConfig(args, env);
    return withCredentialDatabase(db, "--db :memory: would lose the account when this command ends", async (target) => {
      const account = await createAccount(target.storage.adapters.keys, input, { actor: cliActor(env) }).catch(
        (error: unknown) => {
          if (error instanceof KeyRuleError) throw new UsageError(flagProblems(error.details));
          throw new Error(storageFailure(db, error), { cause: error });
        },
      );
      if (args.switches.has("json")) io.out(JSON.stringify(accountJson(account)));
      else {
        io.out(`Created account ${accountLine(account)}.`);
        io.out(storedLine(target, "A server on another database does not know it"));
      }
      return 0;
    });
  },
};
