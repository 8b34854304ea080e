import type { Command } from "./_command.js";
import { DB_AND_LIMITER_HELP, viewsOf, withDatabase } from "./_key-access.js";
import { allowFromCell, scopesCell, shortTime, stateCell, table, todayCell } from "./_key-text.js";

/** `petstore keys list`: every key as `keys show` sees it, one row each; never key material. */
export const keysListCommand: Command = {
  spec: { name: "keys list", flags: { db: "value", limiter: "value", json: "switch" }, positionals: [] },
  usage: "petstore keys list [--db URL] [--limiter URL] [--json]",
  help: `Lists the API keys in the order they were made: id, every state it is in (active, rolling,
banned, expired, revoked), plan, limits, today's requests
against the day's limit, when each was created, expires, was last used (written by the
servers within 10 s), until when a rolled key's old secret works, a ban, when it was revoked,
and its label. Keys themselves are never stored, so they cannot be shown.

${DB_AND_LIMITER_HELP}
  --json          print one JSON array of the objects 'petstore keys show --json' prints`,
  run: async (args, env, io) =>
    withDatabase(args, env, io, { limiter: true }, async (access) => {
      const keys = await viewsOf(access, await access.storage.adapters.keys.list());
      if (args.switches.has("json")) {
        if (access.noLimiter !== undefined && keys.length > 0) io.err(`petstore: usage unknown: ${access.noLimiter}`);
        io.out(JSON.stringify(keys));
        return 0;
      }
      if (keys.length === 0) {
        io.out(`No API keys yet. Create one: ${io.program} keys create --plan free`);
        return 0;
      }
      const header = [
        "ID",
        "STATE",
        "PLAN",
        "PER-MINUTE",
        "PER-DAY",
        "TODAY",
        "CREATED",
        "EXPIRES",
        "LAST-USED",
        "ROLLING-UNTIL",
        "BANNED-UNTIL",
        "REVOKED",
        "SCOPES",
        "ALLOW-FROM",
        "LABEL",
      ];
      const rows = keys.map((k) => [
        k.id,
        stateCell(k),
        k.plan,
        String(k.perMinute),
        String(k.perDay),
        todayCell(k),
        shortTime(k.createdAt),
        shortTime(k.expiresAt),
        shortTime(k.lastUsedAt),
        shortTime(k.rolling?.until ?? null),
        k.usage ? shortTime(k.usage.bannedUntil) : "?",
        shortTime(k.revokedAt),
        scopesCell(k),
        allowFromCell(k),
        k.label ?? "",
      ]);
      for (const line of table([header, ...rows])) io.out(line);
      if (access.noLimiter !== undefined) io.err(`petstore: usage unknown (?): ${access.noLimiter}`);
      return 0;
    }),
};
