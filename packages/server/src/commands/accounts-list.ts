import type { Command } from "./_command.js";
import { accountJson, accountLine } from "./_account-text.js";
import { withDatabase } from "./_key-access.js";

/** `petstore accounts list`: every account, in the order they were made. */
export const accountsListCommand: Command = {
  spec: { name: "accounts list", flags: { db: "value", json: "switch" }, positionals: [] },
  usage: "petstore accounts list [--db URL] [--json]",
  help: `Lists the accounts in the order they were made: id, name, plan, limits and ranges. A key made
without --account has an account of its own (acct_ and its id's characters).

  --db URL    file:PATH (default file:petstore.db), libsql://, postgres:// (env PETSTORE_DB; PETSTORE_DB_AUTH_TOKEN, PGPASSWORD)
  --json      print one JSON array of accounts, as 'petstore accounts show --json' prints each`,
  run: (args, env, io) =>
    withDatabase(args, env, io, { limiter: false }, async (access) => {
      const accounts = await access.storage.adapters.keys.listAccounts();
      if (args.switches.has("json")) io.out(JSON.stringify(accounts.map(accountJson)));
      else for (const account of accounts) io.out(accountLine(account));
      return 0;
    }),
};
