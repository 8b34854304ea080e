import type { Command } from "./_command.js";
import { openExistingStorage } from "./_database-file.js";
import { storageFailure } from "../open-storage.js";
import { dbConfig } from "./_options.js";

/** `petstore keys revoke <id>`: running servers refuse the key within 5 seconds. */
export const keysRevokeCommand: Command = {
  spec: { name: "keys revoke", flags: { db: "value" }, positionals: ["id"] },
  usage: "petstore keys revoke <id> [--db URL]",
  help: `Revokes an API key by its id (see 'petstore keys list'). Every server on the database
refuses the key within 5 seconds. Revoking a key again says when it was revoked and changes
nothing.

  --db URL    file:PATH (default file:petstore.db), libsql://, postgres:// (env PETSTORE_DB; PETSTORE_DB_AUTH_TOKEN, PGPASSWORD)`,
  run: async (args, env, io) => {
    const id = args.positionals[0]!;
    const db = dbConfig(args, env);
    const storage = await openExistingStorage(db, io);
    if (storage === undefined) return 1;
    try {
      // Said, not done again: a second revoke keeps the first time, and "Revoked" would hide that.
      const revokedAt = (await storage.adapters.keys.list()).find((record) => record.id === id)?.revokedAt;
      if (revokedAt !== undefined) {
        io.out(`${id} was already revoked at ${new Date(revokedAt).toISOString()}; nothing changed.`);
        return 0;
      }
      const revoked = await storage.adapters.keys.revoke(id, Date.now()).catch((error: unknown) => {
        throw new Error(storageFailure(db.url, error), { cause: error });
      });
      if (!revoked) {
        io.err(`petstore: no API key has the id '${id}' (see 'petstore keys list')`);
        return 1;
      }
      io.out(`Revoked ${id}. Servers refuse it within 5 seconds.`);
      return 0;
    } finally {
      storage.close();
    }
  },
};
