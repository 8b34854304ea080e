import type { Command } from "./_command.js";
import { openExistingStorage } from "./_database-file.js";
import { storageFailure } from "../open-storage.js";
import { cliActor, dbConfig } from "./_options.js";

/** `petstore keys revoke <id>`: running servers refuse the key within 5 seconds. */
export const keysRevokeCommand: Command = {
  spec: { name: "keys revoke", flags: { db: "value" }, positionals: ["id"] },
  usage: "petstore keys revoke <id> [--db URL]",
  help: `Revokes an API key by its id (see 'petstore keys list'). Every server on the database
refuses the key within 5 seconds. A key already revoked keeps its first revocation time:
that is said, and nothing changes.

  --db URL    file:PATH (default file:petstore.db), libsql://, postgres:// (env PETSTORE_DB; PETSTORE_DB_AUTH_TOKEN, PGPASSWORD)`,
  run: async (args, env, io) => {
    const id = args.positionals[0]!;
    const db = dbConfig(args, env);
    const storage = await openExistingStorage(db, io);
    if (storage === undefined) return 1;
    try {
      const revoked = await storage.adapters.keys.revoke(id, cliActor(env)).catch((error: unknown) => {
        throw new Error(storageFailure(db.url, error), { cause: error });
      });
      if (revoked.state === "missing") {
        io.err(`petstore: no API key has the id '${id}' (see 'petstore keys list')`);
        return 1;
      }
      // Said, not done again: a second revoke keeps the first time, and "Revoked" would hide that.
      if (revoked.state === "revoked") {
        io.out(`${id} was already revoked at ${new Date(revoked.record.revokedAt!).toISOString()}; nothing changed.`);
        return 0;
      }
      io.out(`Revoked ${id}. Servers refuse it within 5 seconds.`);
      return 0;
    } finally {
      storage.close();
    }
  },
};
