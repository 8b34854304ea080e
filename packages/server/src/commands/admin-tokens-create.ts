import { issueAdminToken } from "@petstore/core";
import { storageFailure } from "../storage/open-storage.js";
import type { Command } from "./_command.js";
import { storedLine, withCredentialDatabase } from "./_database-file.js";
import { labelFlag } from "./_key-flags.js";
import { cliActor, dbConfig } from "./_options.js";

/** `petstore admin-tokens create`: a credential of the admin API, shown this once. */
export const adminTokensCreateCommand: Command = {
  spec: { name: "admin-tokens create", flags: { label: "value", db: "value", json: "switch" }, positionals: [] },
  usage: "petstore admin-tokens create [--label TEXT] [--db URL] [--json]",
  help: `Creates an admin token and prints it: the credential of the admin API that
'petstore serve --admin-listen' serves (create, change, roll, revoke keys, lift bans, read the
audit trail). It is shown only this once: the database keeps its SHA-256. Admin tokens start
with psa_, API keys with psk_: neither is ever accepted as the other. Its creation is recorded
in the audit trail (under the token's id, as made by cli:USER@HOST).

  --label TEXT  a note to recognise the token by in 'petstore admin-tokens list' (whose laptop, which tool)
  --db URL      file:PATH (default file:petstore.db, in the current directory; made when
                missing, as 'keys create' does), libsql://, postgres:// (env PETSTORE_DB;
                PETSTORE_DB_AUTH_TOKEN, PGPASSWORD): the database the admin listener's server
                uses. Not :memory:, which ends with the command
  --json        print one JSON object: id, token, label, createdAt, database (the path or URL
                it was stored in) and databaseCreated (true when made now)`,
  run: async (args, env, io) => {
    const label = args.values.label === undefined ? undefined : labelFlag(args.values.label);
    const db = dbConfig(args, env);
    // A token in a process's private memory is gone when the command ends (exit 0 would lie).
    const memoryMistake =
      "--db :memory: would lose the token when this command ends: give the database your server uses";
    return withCredentialDatabase(db, memoryMistake, async (target) => {
      const { storage, database, created } = target;
      const { token, record } = await issueAdminToken(storage.adminTokens, label === undefined ? {} : { label }, {
        keys: storage.adapters.keys,
        actor: cliActor(env),
      }).catch((error: unknown) => {
        throw new Error(storageFailure(db, error), { cause: error });
      });
      const createdAt = new Date(record.createdAt).toISOString();
      if (args.switches.has("json")) {
        io.out(
          JSON.stringify({
            id: record.id,
            token,
            label: record.label ?? null,
            createdAt,
            database,
            databaseCreated: created,
          }),
        );
        return 0;
      }
      io.out(`Created admin token ${record.id}${label === undefined ? "" : ` (label ${JSON.stringify(label)})`}.`);
      io.out(storedLine(target, "The admin listener of a server on another database refuses this token"));
      io.out("");
      io.out(`    ${token}`);
      io.out("");
      io.out(
        "This is the only time the token is shown: store it now. Send it to the admin listener as 'Authorization: Bearer <token>'.",
      );
      return 0;
    });
  },
};
