/**
 * Where a server variant spends its CPU: the server's source under `bun --cpu-prof` with the
 * flags of `binary-memory` (or `binary-file`), seeded like the benchmark, under the same load
 * for `--duration` seconds; then the functions with the most self time.
 *
 *   npx tsx --conditions=@petstore/source bench/profile.ts [--db memory|file] [--endpoint GET|POST] [--duration 5] [--top 15]
 *
 * The profile file is kept (its path is printed) for Chrome DevTools or speedscope.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { generateApiKey } from "@petstore/core";
import { loadGenerator } from "./_load.js";
import { freePort, pinned, start, stop, waitUntilServing } from "./_processes.js";
import { table } from "./_stats.js";
import { cleanEnv, createKey, seedAndCheck, UNLIMITED } from "./_variants.js";

const ROOT = join(import.meta.dirname, "..");
const { values } = parseArgs({
  options: {
    db: { type: "string", default: "memory" },
    endpoint: { type: "string", default: "GET" },
    duration: { type: "string", default: "5" },
    top: { type: "string", default: "15" },
    connections: { type: "string", default: "64" },
  },
});
if (!["memory", "file"].includes(values.db) || !["GET", "POST"].includes(values.endpoint)) {
  console.error("usage: bench/profile.ts [--db memory|file] [--endpoint GET|POST] [--duration S] [--top N]");
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

const dir = mkdtempSync(join(tmpdir(), "petstore-profile-"));
const port = await freePort();
let key: string;
let env: NodeJS.ProcessEnv;
let db: string;
if (values.db === "memory") {
  key = generateApiKey();
  db = ":memory:";
  env = cleanEnv({ PETSTORE_BOOTSTRAP_KEY: key, PETSTORE_BOOTSTRAP_PER_MINUTE: UNLIMITED, PETSTORE_BOOTSTRAP_PER_DAY: UNLIMITED });
} else {
  db = `file:${join(dir, "petstore.db")}`;
  key = await createKey(db);
  env = cleanEnv();
}
const command = [
  join(ROOT, "node_modules/.bin/bun"),
  "--cpu-prof",
  `--cpu-prof-dir=${dir}`,
  "--conditions=@petstore/source",
  join(ROOT, "packages/server/src/main.ts"),
  ...["serve", "--host", "127.0.0.1", "--port", String(port), "--db", db],
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
    `${values.endpoint} /v1/pets on --db ${db === ":memory:" ? ":memory:" : "file:…"} under bun --cpu-prof (source, not the compiled binary), ${load.name}: ` +
      `${result.perSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, non-2xx ${result.other + result.limited}`,
  );
} finally {
  // SIGTERM lets the server stop gracefully and exit, which is when Bun writes the profile.
  await stop(server);
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
console.log(`\nTop ${top.length} functions by self time (${(totalUs / 1000).toFixed(0)} ms busy, ${(idleUs / 1000).toFixed(0)} ms idle); profile: ${join(dir, file)}`);
console.log(table([["self ms", "self %", "function"], ...top.map(([name, us]) => [(us / 1000).toFixed(1), ((100 * us) / totalUs).toFixed(1), name])]));
