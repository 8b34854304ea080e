import { revokeAdminToken } from "@petstore/core";
import type { Command } from "./_command.js";
import { withDatabase } from "./_key-access.js";
import { cliActor } from "./_options.js";

/** `petstore admin-tokens revoke <id>`: the admin API refuses the token from then on. */
export const adminTokensRevokeCommand: Command = {
  spec: { name: "admin-tokens revoke", flags: { db: "value" }, positionals: ["id"] },
  usage: "petstore admin-tokens revoke <id> [--db URL]",
  help: `Revokes an admin token by its id (tok_..., see 'petstore admin-tokens list'): the admin API
answers it 401 from then on. A token already revoked keeps its first revocation time: that is
said, and nothing changes. The revocation is recorded in the audit trail.

  --db URL    file:PATH (default file:petstore.db), libsql://, postgres:// (env PETSTORE_DB;
              PETSTORE_DB_AUTH_TOKEN, PGPASSWORD). A file that does not exist is refused`,
  run: async (args, env, io) => {
    const id = args.positionals[0]!;
    return withDatabase(args, env, io, { limiter: false }, async ({ storage }) => {
      const revoked = await revokeAdminToken(storage.adminTokens, id, {
        keys: storage.adapters.keys,
        actor: cliActor(env),
      });
      if (revoked === "missing") {
        io.err(`petstore: no admin token has the id '${id}' (see '${io.program} admin-tokens list')`);
        return 1;
      }
      if (revoked === "already_revoked") {
        const record = await storage.adminTokens.get(id);
        io.out(`${id} was already revoked at ${new Date(record!.revokedAt!).toISOString()}; nothing changed.`);
        return 0;
      }
      io.out(`Revoked ${id}: the admin API answers it 401 from now on.`);
      return 0;
    });
  },
};
