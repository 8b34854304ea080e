import type { Command } from "./_command.js";
import { withDatabase } from "./_key-access.js";
import { shortTime, table } from "./_key-text.js";

/** `petstore admin-tokens list`: the admin API's credentials; never a token, nor its hash. */
export const adminTokensListCommand: Command = {
  spec: { name: "admin-tokens list", flags: { db: "value", json: "switch" }, positionals: [] },
  usage: "petstore admin-tokens list [--db URL] [--json]",
  help: `Lists the admin tokens in the order they were made: id, when created, when revoked, label.
Tokens themselves are never stored, so they cannot be shown.

  --db URL    file:PATH (default file:petstore.db), libsql://, postgres:// (env PETSTORE_DB;
              PETSTORE_DB_AUTH_TOKEN, PGPASSWORD). A file that does not exist is refused
  --json      print one JSON array of { id, label, createdAt, revokedAt }`,
  run: async (args, env, io) =>
    withDatabase(args, env, io, { limiter: false }, async ({ storage }) => {
      const tokens = (await storage.adminTokens.list()).map((record) => ({
        id: record.id,
        label: record.label ?? null,
        createdAt: new Date(record.createdAt).toISOString(),
        revokedAt: record.revokedAt === undefined ? null : new Date(record.revokedAt).toISOString(),
      }));
      if (args.switches.has("json")) io.out(JSON.stringify(tokens));
      else if (tokens.length === 0)
        io.out(`No admin tokens yet. Create one: ${io.program} admin-tokens create --label NAME`);
      else
        for (const line of table([
          ["ID", "CREATED", "REVOKED", "LABEL"],
          ...tokens.map((t) => [t.id, shortTime(t.createdAt), shortTime(t.revokedAt), t.label ?? ""]),
        ]))
          io.out(line);
      return 0;
    }),
};
