/**
 * What the work every request gained since BEFORE_COMMIT costs (usage counts, an account's
 * second bucket, scopes, allowlists, the retired-secret estimate, lapse): CPU time per request
 * through `petstore.fetch` in process, today's core and adapters against that commit's
 * (extracted by bench/_before.ts and imported from its source), one request at a time, in
 * interleaved batches (A B B A, then B A A B...), on the memory adapters and on a libSQL file
 * each (what `binary-memory` and `binary-file` run), GET and POST. Each petstore flushes after
 * each of its batches (today's writes its usage counts then, far more often than a server's
 * 10 s), so what a flush costs is counted in full. Printed per case: today's CPU per request
 * over the earlier one's (median over the groups) and the figures behind it.
 *
 *   npx bun --conditions=@petstore/source bench/new-work-cost.ts [--seconds 4] [--json]
 *
 * Under Bun only (the earlier tree is found with Bun's resolver). `--seconds`: measuring time
 * per case (default 4); `--json`: one JSON line for `npm run bench`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import * as todayLibsql from "@petstore/adapters/libsql";
import * as todayConnect from "@petstore/adapters/libsql/connect";
import * as todayMemory from "@petstore/adapters/memory";
import * as todayCore from "@petstore/core";
import type { Adapters } from "@petstore/core";
import { BATCH_DESCRIPTION, type CaseCost, getAndPost } from "./_abba.js";
import { BEFORE_COMMIT, beforeModule } from "./_before.js";
import { type Core, petstoreCalls } from "./_in-process.js";

const { values } = parseArgs({ options: { seconds: { type: "string", default: "4" }, json: { type: "boolean" } } });
const seconds = Number(values.seconds);
if (!(seconds > 0)) throw new Error(`--seconds must be a positive number, not ${values.seconds}`);

/** One version of the code: its core and the adapters entry points the two cases need. */
interface Version {
  core: Core;
  memory: typeof todayMemory;
  libsql: typeof todayLibsql;
  connect: typeof todayConnect;
}

const today: Version = { core: todayCore, memory: todayMemory, libsql: todayLibsql, connect: todayConnect };
// The earlier commit's modules differ in their types; what is called here kept its signature.
const before: Version = {
  core: (await import(beforeModule("@petstore/core"))) as Core,
  memory: (await import(beforeModule("@petstore/adapters/memory"))) as typeof todayMemory,
  libsql: (await import(beforeModule("@petstore/adapters/libsql"))) as typeof todayLibsql,
  connect: (await import(beforeModule("@petstore/adapters/libsql/connect"))) as typeof todayConnect,
};

/** A case's cost: `a` today's code, `b` the earlier one's. */
export type NewWorkCost = CaseCost;

/** Today's against the earlier code on the adapters `adaptersOf` makes of each, GET and POST. */
async function measure(where: string, adaptersOf: (version: Version) => Promise<Adapters>): Promise<NewWorkCost[]> {
  const now = await petstoreCalls(await adaptersOf(today), {}, today.core);
  const then = await petstoreCalls(await adaptersOf(before), {}, before.core);
  return getAndPost(where, { ...now, after: now.petstore.flush }, { ...then, after: then.petstore.flush }, seconds);
}

const results = await measure("memory", async (version) => version.memory.memoryAdapters());
const dir = mkdtempSync(join(tmpdir(), "petstore-new-work-cost-"));
const clients: { close(): void }[] = [];
try {
  results.push(
    ...(await measure("file", async (version) => {
      const client = await version.connect.connectLibsql({
        url: `file:${join(dir, `${version === today ? "today" : "before"}.db`)}`,
      });
      clients.push(client);
      await version.libsql.migrateLibsql(client);
      return version.libsql.libsqlAdapters(client);
    })),
  );
} finally {
  for (const client of clients) client.close();
  rmSync(dir, { recursive: true, force: true });
}

if (values.json) console.log(JSON.stringify({ commit: BEFORE_COMMIT, cases: results }));
else {
  console.log(
    `The new work: CPU per request in process, today's code over ${BEFORE_COMMIT}'s (Bun, ${seconds} s per case, ${BATCH_DESCRIPTION})`,
  );
  for (const r of results)
    console.log(
      `  ${r.case.padEnd(26)} ${((r.ratio - 1) * 100).toFixed(1).padStart(5)} %  (${r.aMicros.toFixed(2)} vs ${r.bMicros.toFixed(2)} µs, ${r.groups} groups)`,
    );
}
