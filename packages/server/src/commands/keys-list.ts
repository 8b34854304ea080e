import { type ApiKeyRecord, DEFAULT_PLANS } from "@petstore/core";
import type { Command } from "./_command.js";
import { openExistingStorage } from "./_database-file.js";
import { dbConfig } from "./_options.js";

/** What may be shown of a key: never the key, nor its hash. */
function publicView(record: ApiKeyRecord) {
  return {
    id: record.id,
    plan: record.plan,
    perMinute: record.perMinute ?? DEFAULT_PLANS[record.plan].perMinute,
    perDay: record.perDay ?? DEFAULT_PLANS[record.plan].perDay,
    label: record.label ?? null,
    createdAt: new Date(record.createdAt).toISOString(),
    revokedAt: record.revokedAt === undefined ? null : new Date(record.revokedAt).toISOString(),
  };
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd());
}

/** `petstore keys list`: every key's id, plan, limits, label and dates; never key material. */
export const keysListCommand: Command = {
  spec: { name: "keys list", flags: { db: "value", json: "switch" }, positionals: [] },
  usage: "petstore keys list [--db URL] [--json]",
  help: `Lists the API keys: id, plan, limits, label, when created and when revoked. Keys
themselves are never stored, so they cannot be shown.

  --db URL    file:PATH (default file:petstore.db), libsql://, postgres:// (env PETSTORE_DB; PETSTORE_DB_AUTH_TOKEN, PGPASSWORD)
  --json      print one JSON array of { id, plan, perMinute, perDay, label, createdAt, revokedAt }`,
  run: async (args, env, io) => {
    const storage = await openExistingStorage(dbConfig(args, env), io);
    if (storage === undefined) return 1;
    try {
      const keys = (await storage.adapters.keys.list()).map(publicView);
      if (args.switches.has("json")) {
        io.out(JSON.stringify(keys));
      } else if (keys.length === 0) {
        io.out("No API keys yet. Create one: petstore keys create --plan free");
      } else {
        const header = ["ID", "PLAN", "PER-MINUTE", "PER-DAY", "CREATED", "REVOKED", "LABEL"];
        const rows = keys.map((k) => [k.id, k.plan, String(k.perMinute), String(k.perDay), k.createdAt, k.revokedAt ?? "-", k.label ?? ""]);
        for (const line of table([header, ...rows])) io.out(line);
      }
      return 0;
    } finally {
      storage.close();
    }
  },
};
