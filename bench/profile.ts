/**
 * Where a server variant spends its CPU: the server's source under `bun --cpu-prof` with the
 * flags of `binary-memory` (or `binary-file`), seeded like the benchmark, under the same load
 * for `--duration` seconds; then the functions with the most self time. With `--heap`, where
 * its memory is once the load stops: RSS split into anonymous and file-backed pages, the JS
 * heap before and after a full collection (object counts by type), and a heap snapshot.
 *
 *   npx tsx --conditions=@petstore/source bench/profile.ts [--db memory|file|postgres] [--limiter redis] [--endpoint GET|POST] [--duration 5] [--top 15] [--heap]
 *
 * `--db postgres` (with `--limiter redis`): the flags of `binary-postgres` (`binary-postgres-redis`),
 * on a PostgreSQL (and Redis) started for the run as `npm run bench` starts them.
 *
 * The profile (and snapshot) files are kept (their paths are printed) for Chrome DevTools or speedscope.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { generateApiKey } from "@petstore/core";
import { loadGenerator } from "./_load.js";
import { freePort, pinned, start, stop, waitUntilServing } from "./_processes.js";
import { table } from "./_stats.js";
import { freshDatabase, sharedRedis, stopEngines } from "./_engines.js";
import { cleanEnv, createKey, seedAndCheck, UNLIMITED } from "./_variants.js";

const ROOT = join(import.meta.dirname, "..");
const { values } = parseArgs({
  options: {
    db: { type: "string", default: "memory" },
    limiter: { type: "string" },
    endpoint: { type: "string", default: "GET" },
    duration: { type: "string", default: "5" },
    top: { type: "string", default: "15" },
    connections: { type: "string", default: "64" },
    heap: { type: "boolean", default: false },
  },
});
if (
  !["memory", "file", "postgres"].includes(values.db) ||
  !["GET", "POST"].includes(values.endpoint) ||
  ![undefined, "redis"].includes(values.limiter)
) {
  console.error(
    "usage: bench/profile.ts [--db memory|file|postgres] [--limiter redis] [--endpoint GET|POST] [--duration S] [--top N]",
  );
  process.exit(2);
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** RSS by kind from /proc, then the preloaded bench/_heap-report.ts's account of the JS heap. */
async function reportHeap(pid: number, created: number): Promise<void> {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1] ?? Number.NaN) / 1024;
  console.log(
    `RSS right after the load: ${kib("VmRSS").toFixed(1)} MiB (anonymous ${kib("RssAnon").toFixed(1)}, file-backed ${kib("RssFile").toFixed(1)}, shared memory ${kib("RssShmem").toFixed(1)})`,
  );
  process.kill(pid, "SIGUSR2");
  const deadline = Date.now() + 30_000;
  while (!existsSync(heapReport)) {
    if (Date.now() > deadline) throw new Error("no heap report within 30 s");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
  type Heap = { heapMiB: number; capacityMiB: number; extraMiB: number; objects: number; types: [string, number][] };
  const report = JSON.parse(readFileSync(heapReport, "utf8")) as {
    rssMiB: number;
    live: Heap;
    collected: Heap;
    rssAfterGcMiB: number;
  };
  const line = (label: string, heap: Heap) =>
    `${label}: heap ${heap.heapMiB.toFixed(1)} MiB of ${heap.capacityMiB.toFixed(1)} MiB capacity, ${heap.extraMiB.toFixed(1)} MiB outside it (buffers), ${heap.objects.toLocaleString("en-US")} objects`;
  console.log(line("JS heap at the end of the load", report.live));
  console.log(`${line("after a full collection", report.collected)}; RSS ${report.rssAfterGcMiB.toFixed(1)} MiB`);
  console.log(
    `  objects by type: ${report.collected.types.map(([type, count]) => `${type} ${count.toLocaleString("en-US")}`).join(", ")}`,
  );
  if (values.endpoint === "POST") console.log(`  (${created.toLocaleString("en-US")} pets created by the load)`);
  console.log(`  heap snapshot (Chrome DevTools, Memory tab): ${heapSnapshot}`);
}

const dir = mkdtempSync(join(tmpdir(), "petstore-profile-"));
const port = await freePort();
let key: string;
let env: NodeJS.ProcessEnv;
let db: string;
if (values.db === "memory") {
  key = generateApiKey();
  db = ":memory:";
  env = cleanEnv({
    PETSTORE_BOOTSTRAP_KEY: key,
    PETSTORE_BOOTSTRAP_PER_MINUTE: UNLIMITED,
    PETSTORE_BOOTSTRAP_PER_DAY: UNLIMITED,
  });
} else {
  db = values.db === "postgres" ? await freshDatabase() : `file:${join(dir, "petstore.db")}`;
  key = await createKey(db);
  env = cleanEnv();
}
const limiterFlags = values.limiter === "redis" ? ["--limiter", await sharedRedis()] : [];
const heapReport = join(dir, "heap.json");
const heapSnapshot = join(dir, "heap.heapsnapshot");
if (values.heap) env = { ...env, BENCH_HEAP_REPORT: heapReport, BENCH_HEAP_SNAPSHOT: heapSnapshot };
const command = [
  join(ROOT, "node_modules/.bin/bun"),
  ...(values.heap ? ["--preload", join(ROOT, "bench/_heap-report.ts")] : []),
  "--cpu-prof",
  `--cpu-prof-dir=${dir}`,
  "--conditions=@petstore/source",
  join(ROOT, "packages/server/src/main.ts"),
  ...["serve", "--host", "127.0.0.1", "--port", String(port), "--db", db, ...limiterFlags],
];
const server = start(pinned(0, command), { env, cwd: ROOT });
const url = `http://127.0.0.1:${port}`;
try {
  await waitUntilServing(server, `${url}/healthz`);
  await seedAndCheck(url, key, true);
  const load = loadGenerator();
  const request =
    values.endpoint === "GET"
      ? { url: `${url}/v1/pets`, method: "GET" as const, key }
      : { url: `${url}/v1/pets`, method: "POST" as const, key, body: JSON.stringify({ name: "Rex", categoryId: 1 }) };
  const result = await load.run(request, Number(values.duration), Number(values.connections));
  console.log(
    `${values.endpoint} /v1/pets on --db ${db === ":memory:" ? ":memory:" : values.db === "postgres" ? "postgres://…" : "file:…"}${values.limiter ? " --limiter redis://…" : ""} under bun --cpu-prof (source, not the compiled binary), ${load.name}: ` +
      `${result.perSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, non-2xx ${result.other + result.limited}`,
  );
  if (values.heap) await reportHeap(server.pid, result.ok);
} finally {
  // SIGTERM lets the server stop gracefully and exit, which is when Bun writes the profile.
  await stop(server);
  await stopEngines();
}

const file = readdirSync(dir).find((name) => name.endsWith(".cpuprofile"));
if (!file) throw new Error(`no .cpuprofile in ${dir}: ${server.stderr.join("\n")}`);
const profile = JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile;

// Self time: each sample's time goes to the function on top of the stack.
const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
const selfUs = new Map<string, number>();
let totalUs = 0;
let idleUs = 0;
profile.samples.forEach((id, i) => {
  const node = byNode.get(id)!;
  const us = profile.timeDeltas[i + 1] ?? 0;
  const { functionName, url: source, lineNumber } = node.callFrame;
  if (functionName === "(idle)") {
    idleUs += us;
    return;
  }
  totalUs += us;
  const path = source.replace(/^file:\/\//, "");
  const where = source ? ` ${path.startsWith("/") ? relative(ROOT, path) : path}:${lineNumber + 1}` : "";
  const name = `${functionName || "(anonymous)"}${where}`;
  selfUs.set(name, (selfUs.get(name) ?? 0) + us);
});
const top = [...selfUs].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top));
console.log(
  `\nTop ${top.length} functions by self time (${(totalUs / 1000).toFixed(0)} ms busy, ${(idleUs / 1000).toFixed(0)} ms idle); profile: ${join(dir, file)}`,
);
console.log(
  table([
    ["self ms", "self %", "function"],
    ...top.map(([name, us]) => [(us / 1000).toFixed(1), ((100 * us) / totalUs).toFixed(1), name]),
  ]),
);
