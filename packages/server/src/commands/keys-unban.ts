import type { Command } from "./_command.js";
import { DB_AND_LIMITER_HELP, noSuchKey, withDatabase } from "./_key-access.js";
import { cliActor } from "./_options.js";

/** `petstore keys unban <id>`: ends the key's ban where the servers count it. */
export const keysUnbanCommand: Command = {
  spec: { name: "keys unban", flags: { db: "value", limiter: "value", json: "switch" }, positionals: ["id"] },
  usage: "petstore keys unban <id> [--db URL] [--limiter URL] [--json]",
  help: `Lifts the ban of an API key (more than 30 refusals within a minute ban a key for 10
minutes): its next request is decided by its limits alone, on every server at once, since the
ban lives in the rate limiter they share. Its minute's and day's counts stay. The lift is
recorded in the audit trail; a key that was not banned is said so, and nothing changes.

${DB_AND_LIMITER_HELP}
  --json          print the key as 'petstore keys show --json' prints it, with unbanned
                  (false when it was not banned)`,
  run: async (args, env, io) => {
    const id = args.positionals[0]!;
    return withDatabase(args, env, io, { limiter: true }, async (access) => {
      const lifted = await access.life.unban(id, cliActor(env));
      if (lifted.state === "missing") return noSuchKey(io, id);
      if (lifted.state === "unsupported") {
        io.err(`petstore: cannot lift a ban here: ${access.noLimiter ?? "this rate limiter cannot lift bans"}`);
        return 1;
      }
      const unbanned = lifted.state === "unbanned";
      if (args.switches.has("json")) io.out(JSON.stringify({ ...(await access.view(lifted.record)), unbanned }));
      else
        io.out(
          unbanned
            ? `Lifted the ban of ${id}: its next request is decided by its limits alone.`
            : `${id} was not banned; nothing changed.`,
        );
      return 0;
    });
  },
};
