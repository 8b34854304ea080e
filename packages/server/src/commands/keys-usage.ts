import { ApiError, type KeyUsageHistory, readKeyUsage, usageCsvLines, usageView } from "@petstore/core";
import { UsageError } from "../cli/usage-error.js";
import type { Command } from "./_command.js";
import { noSuchKey, withDatabase } from "./_key-access.js";
import { sinceFlag, stepFlag } from "./_key-flags.js";
import { shortTime, table } from "./_key-text.js";

const HOURS_48 = 48 * 3_600_000;

/** The table a person reads: a row per bucket, then the totals. */
function usageTable(history: KeyUsageHistory): string[] {
  const when = (at: number) => {
    const text = shortTime(new Date(at).toISOString());
    return history.step === "day" ? text.slice(0, 10) : text;
  };
  const row = (first: string, counts: KeyUsageHistory["totals"]) => [
    first,
    String(counts.admitted),
    String(counts.rateLimited),
    String(counts.banned),
    String(counts.unauthorized),
  ];
  return table([
    [`${history.step.toUpperCase()} (UTC)`, "ADMITTED", "RATE-LIMITED", "BANNED", "UNAUTHORIZED"],
    ...history.buckets.map((bucket) => row(when(bucket.at), bucket)),
    row("TOTAL", history.totals),
  ]);
}

/** `petstore keys usage <id>`: one key's requests by outcome over a span, bucket by bucket. */
export const keysUsageCommand: Command = {
  spec: {
    name: "keys usage",
    flags: { since: "value", step: "value", db: "value", json: "switch", csv: "switch" },
    positionals: ["id"],
  },
  usage: "petstore keys usage <id> [--since 24h] [--step minute|hour|day] [--db URL] [--json | --csv]",
  help: `Shows one API key's requests by outcome, bucket by bucket: admitted, rate limited
(429 rate_limited), banned (429 temporarily_banned) and unauthorized (401: the key revoked or
expired, or a secret of it replaced by a roll). Kept by minute for 48 hours and by UTC day
for 400 days; the servers write their counts at least every 10 s, so the latest seconds may
be missing.

  --since DURATION  how far back: 90m, 24h, 30d... (default 24h; at most 48h by minute or
                    hour, 400d by day)
  --step STEP       minute, hour or day (default hour up to 48h back, else day)
  --db URL          file:PATH (default file:petstore.db), libsql://, postgres:// (env PETSTORE_DB;
                    PETSTORE_DB_AUTH_TOKEN, PGPASSWORD). A file that does not exist is refused
  --json            print one JSON object, as the admin API's GET /keys/{id}/usage: keyId, step,
                    from, to, totals, buckets ({ at, admitted, rateLimited, banned, unauthorized })
  --csv             print CSV: at,admitted,rate_limited,banned,unauthorized, a line per bucket`,
  run: async (args, env, io) => {
    const id = args.positionals[0]!;
    if (args.switches.has("json") && args.switches.has("csv")) throw new UsageError("give --json or --csv, not both");
    const sinceText = args.values.since ?? "24h";
    const since = sinceFlag(sinceText);
    const step = args.values.step === undefined ? (since <= HOURS_48 ? "hour" : "day") : stepFlag(args.values.step);
    return withDatabase(args, env, io, { limiter: false }, async (access) => {
      const { keys } = access.storage.adapters;
      if ((await keys.get(id)) === undefined) return noSuchKey(io, id);
      const now = Date.now();
      const history = await readKeyUsage(keys, id, { from: now - since, step, now }).catch((error: unknown) => {
        // The read's one refusal a command line can make: a span older than what is kept.
        if (error instanceof ApiError && error.details?.[0]?.path === "from")
          throw new UsageError(`--since ${sinceText} ${error.details[0].message}`);
        throw error;
      });
      if (args.switches.has("json")) io.out(JSON.stringify(usageView(history)));
      else if (args.switches.has("csv")) for (const line of usageCsvLines(history)) io.out(line);
      else for (const line of usageTable(history)) io.out(line);
      return 0;
    });
  },
};
