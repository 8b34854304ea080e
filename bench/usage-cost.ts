/**
 * What recording the keys' usage costs a request: CPU time per request through `petstore.fetch`
 * in process, one request at a time, with usage recorded (the default) and without
 * (`recordUsage: false`), on the memory adapters and on a libSQL file (what `binary-memory`
 * and `binary-file` run). The two petstores share one set of adapters and run in interleaved
 * batches (A B B A, then B A A B, and so on), so that a drift of the machine weighs on both alike; the
 * recording one writes its counts after each of its batches, far more often than a server's
 * 10 s, so the write's cost is counted in full. Printed per case: the ratio of CPU per request
 * (median over the groups), and the figures behind it.
 *
 *   npx bun --conditions=@petstore/source bench/usage-cost.ts [--seconds 4] [--json]
 *
 * Also the recorder's own cost per count, alone, in nanoseconds: the part of a request the A/B is
 * about, which the machine's noise cannot hide. `--seconds`: measuring time per case (default
 * 4); `--json`: one JSON line for `npm run bench`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { libsqlAdapters, migrateLibsql } from "@petstore/adapters/libsql";
import { connectLibsql } from "@petstore/adapters/libsql/connect";
import { memoryAdapters } from "@petstore/adapters/memory";
import type { Adapters } from "@petstore/core";
import { BATCH_DESCRIPTION, type CaseCost, getAndPost } from "./_abba.js";
import { petstoreCalls } from "./_in-process.js";
// The recorder itself, from core's source: the one part of a request the A/B above is about.
import { usageRecorder } from "../packages/core/src/usage/usage-recorder.js";

const { values } = parseArgs({ options: { seconds: { type: "string", default: "4" }, json: { type: "boolean" } } });
const seconds = Number(values.seconds);
if (!(seconds > 0)) throw new Error(`--seconds must be a positive number, not ${values.seconds}`);

/** A case's cost: `a` recording usage, `b` not. */
export type UsageCost = CaseCost;

/** The cost on `adapters` for GET and POST. */
async function measure(where: string, adapters: Adapters): Promise<UsageCost[]> {
  const recording = await petstoreCalls(adapters);
  const quiet = await petstoreCalls(adapters, { recordUsage: false });
  return getAndPost(where, { ...recording, after: recording.petstore.flush }, quiet, seconds);
}

/**
 * The recording alone, without a request around it: nanoseconds per count of one key within
 * one minute (the common case), for a figure the machine's noise does not drown.
 */
function countAlone(): number {
  const recorder = usageRecorder({ addUsage: async () => {} });
  const at = Date.now();
  const counts = 1_000_000;
  for (let i = 0; i < counts / 10; i++) recorder.count("key_bench", "admitted", at, true, performance.now());
  const started = performance.now();
  for (let i = 0; i < counts; i++) recorder.count("key_bench", "admitted", at, true, started);
  const ns = ((performance.now() - started) * 1e6) / counts;
  void recorder.flush();
  return ns;
}
const countNs = countAlone();

const results = await measure("memory", memoryAdapters());
const dir = mkdtempSync(join(tmpdir(), "petstore-usage-cost-"));
const client = await connectLibsql({ url: `file:${join(dir, "usage.db")}` });
try {
  await migrateLibsql(client);
  results.push(...(await measure("file", libsqlAdapters(client))));
} finally {
  client.close();
  rmSync(dir, { recursive: true, force: true });
}

if (values.json) console.log(JSON.stringify({ countNs, cases: results }));
else {
  const runtime = "Bun" in globalThis ? "Bun" : `Node ${process.version}`;
  console.log(`Usage recording, CPU per request in process (${runtime}, ${seconds} s per case, ${BATCH_DESCRIPTION})`);
  console.log(`  one count alone: ${countNs.toFixed(0)} ns`);
  for (const r of results)
    console.log(
      `  ${r.case.padEnd(26)} ${((r.ratio - 1) * 100).toFixed(1).padStart(5)} %  (${r.aMicros.toFixed(2)} vs ${r.bMicros.toFixed(2)} µs, ${r.groups} groups)`,
    );
}
