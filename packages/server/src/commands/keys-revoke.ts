import type { Command } from "./_command.js";
import { noSuchKey, withDatabase } from "./_key-access.js";
import { cliActor } from "./_options.js";

/** `petstore keys revoke <id>`: running servers refuse the key within 5 seconds. */
export const keysRevokeCommand: Command = {
  spec: { name: "keys revoke", flags: { db: "value", json: "switch" }, positionals: ["id"] },
  usage: "petstore keys revoke <id> [--db URL] [--json]",
  help: `Revokes an API key by its id (see 'petstore keys list'): its current secret and, during
a roll's overlap, its old one. Every server on the database refuses the key within 5 seconds.
A key already revoked keeps its first revocation time: that is said, and nothing changes. The
revocation is recorded in the audit trail.

  --db URL    file:PATH (default file:petstore.db), libsql://, postgres:// (env PETSTORE_DB; PETSTORE_DB_AUTH_TOKEN, PGPASSWORD)
  --json      print the key after it, as 'petstore keys show --json' prints it`,
  run: async (args, env, io) => {
    const id = args.positionals[0]!;
    return withDatabase(args, env, io, { limiter: false }, async (access) => {
      const revoked = await access.life.revoke(id, cliActor(env));
      if (revoked.state === "missing") return noSuchKey(io, id);
      if (args.switches.has("json")) {
        io.out(JSON.stringify(await access.view(revoked.record)));
        return 0;
      }
      // Said, not done again: a second revoke keeps the first time, and "Revoked" would hide that.
      if (revoked.state === "revoked") {
        io.out(`${id} was already revoked at ${new Date(revoked.record.revokedAt!).toISOString()}; nothing changed.`);
        return 0;
      }
      io.out(`Revoked ${id}. Servers refuse it within 5 seconds.`);
      return 0;
    });
  },
};
