import type { ApiKeys } from "@petstore/core";
import type { Command } from "./_command.js";
import { accountJson, accountLine, noSuchAccount } from "./_account-text.js";
import { withDatabase } from "./_key-access.js";

const PAGE = 500;

/** The ids of an account's keys, in the order they were made: read by account, a page at a time. */
async function accountKeyIds(keys: ApiKeys, accountId: string): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const page = await keys.list({ limit: PAGE, accountId, ...(ids.length > 0 && { afterId: ids.at(-1)! }) });
    ids.push(...page.map((key) => key.id));
    if (page.length < PAGE) return ids;
  }
}

/** `petstore accounts show <id>`: an account and its keys. */
export const accountsShowCommand: Command = {
  spec: { name: "accounts show", flags: { db: "value", json: "switch" }, positionals: ["id"] },
  usage: "petstore accounts show <id> [--db URL] [--json]",
  help: `Shows one account: its name, plan and limits (its own, or its plan's), the ranges its
keys' requests must come from, when it was made, and the ids of its keys.

  --db URL    file:PATH (default file:petstore.db), libsql://, postgres:// (env PETSTORE_DB; PETSTORE_DB_AUTH_TOKEN, PGPASSWORD)
  --json      print one JSON object: id, name, plan, perMinute, perDay, createdAt, allowFrom, keys (their ids)`,
  run: (args, env, io) => {
    const id = args.positionals[0]!;
    return withDatabase(args, env, io, { limiter: false }, async (access) => {
      const { keys } = access.storage.adapters;
      const account = await keys.getAccount(id);
      if (!account) return noSuchAccount(io, id);
      const ids = await accountKeyIds(keys, id);
      if (args.switches.has("json")) io.out(JSON.stringify({ ...accountJson(account), keys: ids }));
      else {
        io.out(accountLine(account));
        io.out(
          `Made ${new Date(account.createdAt).toISOString()}; keys: ${ids.length === 0 ? "none" : ids.join(", ")}`,
        );
      }
      return 0;
    });
  },
};
