import type { AuditEntry } from "@petstore/core";
import type { Command } from "./_command.js";
import { withDatabase } from "./_key-access.js";
import { shortTime, table } from "./_key-text.js";
import { integerSetting } from "./_options.js";

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 10_000;

/** An entry as the admin API's GET /audit shows it: its instant as ISO 8601. */
const entryView = (entry: AuditEntry) => ({ ...entry, at: new Date(entry.at).toISOString() });

/** What changed, in one cell: the details as `name=value`, the idempotency record left out (it is the API's). */
function detailsCell(details: AuditEntry["details"]): string {
  const shown = Object.entries(details ?? {}).filter(([name]) => name !== "idempotency");
  return shown.map(([name, value]) => `${name}=${typeof value === "string" ? value : JSON.stringify(value)}`).join(" ");
}

/** `petstore audit`: the trail of changes to keys, newest first. */
export const auditCommand: Command = {
  spec: {
    name: "audit",
    flags: { key: "value", limit: "value", before: "value", db: "value", json: "switch" },
    positionals: [],
  },
  usage: "petstore audit [--key ID] [--limit N] [--before ENTRY] [--db URL] [--json]",
  help: `Prints the audit trail, newest first: every change to a key (create, update, roll, revoke,
unban) with when, who made it (admin:<token id> through the admin API, cli:USER@HOST from
this command line), from which address, and what changed. The trail is kept in the database
beside the keys; nothing edits or deletes it.

  --key ID        only the changes to this key
  --limit N       at most N entries (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT})
  --before ENTRY  only entries older than this entry's number (the ENTRY column): the next page
  --db URL        file:PATH (default file:petstore.db), libsql://, postgres:// (env PETSTORE_DB;
                  PETSTORE_DB_AUTH_TOKEN, PGPASSWORD). A file that does not exist is refused
  --json          print one JSON array, as the admin API's GET /audit: { id, at, action, keyId,
                  actor: { who, from? }, details? }`,
  run: async (args, env, io) => {
    const { key: keyId, limit: limitText, before } = args.values;
    const limit = limitText === undefined ? DEFAULT_LIMIT : integerSetting(limitText, "--limit", 1, MAX_LIMIT);
    const beforeId = before === undefined ? undefined : integerSetting(before, "--before", 1, Number.MAX_SAFE_INTEGER);
    return withDatabase(args, env, io, { limiter: false }, async (access) => {
      // One more than asked: whether there is a page after this one.
      const read = await access.storage.adapters.keys.auditTrail({
        limit: limit + 1,
        ...(beforeId !== undefined && { beforeId }),
        ...(keyId !== undefined && { keyId }),
      });
      const entries = read.slice(0, limit);
      if (args.switches.has("json")) {
        io.out(JSON.stringify(entries.map(entryView)));
        return 0;
      }
      if (entries.length === 0) {
        io.out(keyId === undefined ? "No changes recorded yet." : `No changes recorded for ${keyId}.`);
        return 0;
      }
      const header = ["ENTRY", "AT", "ACTION", "KEY", "WHO", "FROM", "DETAILS"];
      const rows = entries.map((entry) => [
        String(entry.id),
        shortTime(entryView(entry).at),
        entry.action,
        entry.keyId,
        entry.actor.who,
        entry.actor.from ?? "-",
        detailsCell(entry.details),
      ]);
      for (const line of table([header, ...rows])) io.out(line);
      if (read.length > limit)
        io.out(
          `(more before: ${io.program} audit --before ${entries.at(-1)!.id}${keyId === undefined ? "" : ` --key ${keyId}`})`,
        );
      return 0;
    });
  },
};
