import type { Command } from "./_command.js";
import { DB_AND_LIMITER_HELP, noSuchKey, withDatabase } from "./_key-access.js";
import { detailLines } from "./_key-text.js";

/** `petstore keys show <id>`: one key's plan, limits, dates, roll, usage and ban; never key material. */
export const keysShowCommand: Command = {
  spec: { name: "keys show", flags: { db: "value", limiter: "value", json: "switch" }, positionals: ["id"] },
  usage: "petstore keys show <id> [--db URL] [--limiter URL] [--json]",
  help: `Shows one API key: plan and limits (the plan's, or set for this key), label, when it was
created, when it expires, when it was last used (written by the servers within 10 s), a roll
whose old secret still works and until when, this minute's and today's requests and a ban,
read from the rate limiter without counting, and when it was revoked. Never the key itself.
Its usage over time: 'petstore keys usage <id>'.

${DB_AND_LIMITER_HELP}
  --json          print one JSON object, as the admin API's GET /keys/{id}: id, plan, perMinute,
                  perDay, label, createdAt, expiresAt, revokedAt, lastUsedAt, rolling ({ since,
                  until } or null), usage ({ minute, day: { used, limit, resetAt },
                  bannedUntil } or null when the limiter cannot be read)`,
  run: async (args, env, io) => {
    const id = args.positionals[0]!;
    return withDatabase(args, env, io, { limiter: true }, async (access) => {
      const record = await access.storage.adapters.keys.get(id);
      if (record === undefined) return noSuchKey(io, id);
      const view = await access.view(record);
      if (args.switches.has("json")) {
        // usage is null: said once on stderr, where a program reading stdout does not trip on it.
        if (access.noLimiter !== undefined) io.err(`petstore: usage unknown: ${access.noLimiter}`);
        io.out(JSON.stringify(view));
      } else for (const line of detailLines(view, record, Date.now(), access.noLimiter, io.program)) io.out(line);
      return 0;
    });
  },
};
