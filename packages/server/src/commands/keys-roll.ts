import { keyView, rollApiKey } from "@petstore/core";
import { UsageError } from "../cli/usage-error.js";
import type { Command } from "./_command.js";
import { DB_AND_LIMITER_HELP, noSuchKey, revokedKey, withDatabase } from "./_key-access.js";
import { overlapFlag } from "./_key-flags.js";
import { shortTime } from "./_key-text.js";
import { cliActor } from "./_options.js";

const time = (ms: number) => shortTime(new Date(ms).toISOString());

/** `petstore keys roll <id> --overlap D`: a new secret for the same key; the old one works for the overlap. */
export const keysRollCommand: Command = {
  spec: {
    name: "keys roll",
    flags: { overlap: "value", db: "value", limiter: "value", json: "switch" },
    positionals: ["id"],
  },
  usage: "petstore keys roll <id> --overlap DURATION [--db URL] [--limiter URL] [--json]",
  help: `Gives an API key a new secret and prints it, the only time it is shown. The key keeps its
id, plan, limits, label and usage (rolling never resets a quota). The old secret keeps working
for the overlap, and every answer to it says until when (Deprecation and Sunset headers), so
its clients can move to the new one; after the overlap it gets 401. A key rolls once at a
time: another roll waits until the overlap ends. The roll is recorded in the audit trail.

  --overlap DURATION  how long the old secret keeps working: 0s (refused at once, for a leaked
                      key), 90s, 10m, 12h, up to 7d
${DB_AND_LIMITER_HELP}
  --json          print one JSON object: the key as 'petstore keys show --json' prints it, with
                  key, the new secret`,
  run: async (args, env, io) => {
    const id = args.positionals[0]!;
    const overlap = args.values.overlap;
    if (overlap === undefined)
      throw new UsageError(
        "--overlap is required: how long the old secret keeps working, 0s to 7d (e.g. --overlap 10m)",
      );
    const overlapMs = overlapFlag(overlap);
    return withDatabase(args, env, io, { limiter: true }, async (access) => {
      const rolled = await rollApiKey(access.storage.adapters.keys, id, overlapMs, cliActor(env));
      if (rolled.state === "missing") return noSuchKey(io, id);
      if (rolled.state === "revoked") return revokedKey(io, id, rolled.record.revokedAt!);
      if (rolled.state === "rolling") {
        const { at, until } = rolled.record.rolled!;
        io.err(
          `petstore: ${id} is already rolling: rolled at ${time(at)}, its old secret works until ${time(until)}; roll it again after that (or revoke it, if that secret leaked)`,
        );
        return 1;
      }
      // The new secret exists now: whatever the limiter says (or fails to say), it is printed.
      const view = await access.view(rolled.record).catch(() => keyView(rolled.record));
      if (args.switches.has("json")) {
        if (access.noLimiter !== undefined) io.err(`petstore: usage unknown: ${access.noLimiter}`);
        io.out(JSON.stringify({ ...view, key: rolled.key }));
        return 0;
      }
      const { until } = rolled.record.rolled!;
      io.out(`Rolled ${id}: a new secret for the same key (plan, limits and usage stay).`);
      io.out(
        overlapMs === 0
          ? "The old secret is refused from now on (every server within 5 seconds)."
          : `The old secret keeps working until ${time(until)}; its answers carry Deprecation and Sunset until then, and it gets 401 after.`,
      );
      io.out("");
      io.out(`    ${rolled.key}`);
      io.out("");
      io.out("This is the only time the new secret is shown: store it now.");
      return 0;
    });
  },
};
