/**
 * One request at a time through `petstore.fetch` in process (no sockets): nanoseconds per
 * request for GET /v1/pets (20 pets) and POST /v1/pets with a bearer key and limits on, over
 * the memory adapters and, for comparison, libSQL `:memory:` (what `binary-memory` runs) and
 * a libSQL file (`binary-file`). Under Node it also prints the bytes allocated per request.
 *
 *   npx bun --conditions=@petstore/source bench/micro.ts     (Bun, the binary's runtime; then Node)
 *   npx tsx --conditions=@petstore/source bench/micro.ts     (Node only)
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { libsqlAdapters, migrateLibsql } from "@petstore/adapters/libsql";
import { connectLibsql } from "@petstore/adapters/libsql/connect";
import { memoryAdapters } from "@petstore/adapters/memory";
import type { Call } from "./_abba.js";
import { petstoreCalls, URL_BASE } from "./_in-process.js";
import { SEED_PETS } from "./_seed.js";
import { median, table } from "./_stats.js";

const WARMUP = 5_000;
const BATCHES = 7;
const BATCH_MS = 300;
/** Requests per allocation sample: few enough that no GC runs in between (checked). */
const ALLOCATION_BATCH = 100;

const isBun = "Bun" in globalThis;
const runtime = isBun
  ? `Bun ${(globalThis as unknown as { Bun: { version: string } }).Bun.version}`
  : `Node ${process.version}`;

/** Bytes allocated per call, from heap growth between forced GCs; Node only (V8's GC profiler tells whether a GC interfered). */
async function allocationsPerCall(call: Call): Promise<number | undefined> {
  if (isBun) return undefined;
  const v8 = await import("node:v8");
  const vm = await import("node:vm");
  v8.setFlagsFromString("--expose-gc");
  const gc = vm.runInNewContext("gc") as () => void;
  const samples: number[] = [];
  for (let attempt = 0; attempt < 40 && samples.length < 5; attempt++) {
    gc();
    const profiler = new v8.GCProfiler();
    profiler.start();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < ALLOCATION_BATCH; i++) await call();
    const after = process.memoryUsage().heapUsed;
    if (profiler.stop().statistics.length === 0) samples.push((after - before) / ALLOCATION_BATCH);
  }
  return samples.length > 0 ? median(samples) : undefined;
}

interface Result {
  label: string;
  nsPerCall: number;
  bytesPerCall: number | undefined;
}

async function measure(label: string, call: Call): Promise<Result> {
  for (let i = 0; i < WARMUP; i++) await call();
  const perBatch: number[] = [];
  for (let batch = 0; batch < BATCHES; batch++) {
    let calls = 0;
    const started = performance.now();
    let elapsed = 0;
    while (elapsed < BATCH_MS) {
      for (let i = 0; i < 64; i++) await call();
      calls += 64;
      elapsed = performance.now() - started;
    }
    perBatch.push((elapsed * 1e6) / calls);
  }
  return { label, nsPerCall: median(perBatch), bytesPerCall: await allocationsPerCall(call) };
}

const results: Result[] = [];

// For scale: what the bare baseline server does per request, in process.
const pets = SEED_PETS.map((pet, i) => ({ id: i + 1, ...pet }));
results.push(
  await measure(
    "new Request(GET) alone",
    async () => void new Request(URL_BASE, { headers: { Authorization: "Bearer x" } }),
  ),
);
results.push(
  await measure("bare handler: new Response(JSON.stringify(20 pets))", async () => {
    void new Request(URL_BASE, { headers: { Authorization: "Bearer x" } });
    await new Response(JSON.stringify(pets), { headers: { "Content-Type": "application/json" } }).text();
  }),
);

{
  // GET first: the POSTs add pets, and GET always answers the first 20.
  const memory = await petstoreCalls(memoryAdapters());
  results.push(await measure("petstore GET /v1/pets, memory adapters", memory.get));
  results.push(await measure("petstore POST /v1/pets, memory adapters", memory.post));
}
for (const where of [":memory:", "file"] as const) {
  const dir = mkdtempSync(join(tmpdir(), "petstore-micro-"));
  const client = await connectLibsql({ url: where === "file" ? `file:${join(dir, "micro.db")}` : ":memory:" });
  try {
    await migrateLibsql(client);
    const libsql = await petstoreCalls(libsqlAdapters(client));
    results.push(await measure(`petstore GET /v1/pets, libSQL ${where}`, libsql.get));
    results.push(await measure(`petstore POST /v1/pets, libSQL ${where}`, libsql.post));
  } finally {
    client.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (value: number) => value.toLocaleString("en-US", { maximumFractionDigits: 0 });
console.log(
  `\nIn process, one request at a time, ${runtime} (${WARMUP} warm-up calls, median of ${BATCHES} batches of ${BATCH_MS} ms)`,
);
console.log(
  table([
    ["case", "ns/request", "requests/s", "bytes allocated/request"],
    ...results.map((r) => [
      r.label,
      fmt(r.nsPerCall),
      fmt(1e9 / r.nsPerCall),
      r.bytesPerCall === undefined ? (isBun ? "n/a (Bun)" : "-") : fmt(r.bytesPerCall),
    ]),
  ]),
);

if (isBun && !process.argv.includes("--this-runtime-only")) {
  const tsx = join(import.meta.dirname, "../node_modules/.bin/tsx");
  const node = spawnSync(tsx, ["--conditions=@petstore/source", join(import.meta.dirname, "micro.ts")], {
    stdio: "inherit",
    timeout: 300_000,
  });
  if (node.error || node.status !== 0)
    console.error(`the Node run failed: ${node.error?.message ?? `exit ${node.status}`}`);
}
