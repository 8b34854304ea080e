/**
 * Memory under an address sweep: distinct anonymous client addresses, one request each,
 * through `petstore.fetch` in process with the memory adapters. Each address is a rate-limit
 * bucket; the memory limiter keeps at most `maxAnonymousBuckets` of them (default 100,000,
 * the least recently used dropped first). Prints the heap and RSS growth at checkpoints and
 * the bytes per bucket, and fails (exit 1) when the limiter holds more buckets than its cap or
 * memory keeps growing once the cap is reached. Each cap runs in a fresh process.
 *
 *   npx bun --conditions=@petstore/source bench/memory.ts      (default cap, then a cap of 10,000)
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { memoryAdapters } from "@petstore/adapters/memory";
import { createPetstore } from "@petstore/core";
import { table } from "./_stats.js";

const DEFAULT_CAP = 100_000;
const ADDRESSES = 100_000;
const isBun = "Bun" in globalThis;

const { values } = parseArgs({ options: { cap: { type: "string" } } });

async function fullGc(): Promise<void> {
  if (isBun) {
    (globalThis as unknown as { Bun: { gc(force: boolean): void } }).Bun.gc(true);
    return;
  }
  const v8 = await import("node:v8");
  const vm = await import("node:vm");
  v8.setFlagsFromString("--expose-gc");
  (vm.runInNewContext("gc") as () => void)();
}

/** One fresh process per cap, so that one run's freed memory does not hide the next one's growth. */
function runEachCap(): void {
  let failed = false;
  for (const cap of [DEFAULT_CAP, 10_000]) {
    const command = isBun
      ? [process.execPath, "--conditions=@petstore/source", import.meta.filename]
      : [join(import.meta.dirname, "../node_modules/.bin/tsx"), "--conditions=@petstore/source", import.meta.filename];
    const child = spawnSync(command[0]!, [...command.slice(1), "--cap", String(cap)], {
      stdio: "inherit",
      timeout: 300_000,
    });
    if (child.status !== 0) failed = true;
  }
  process.exitCode = failed ? 1 : 0;
}

async function measureCap(cap: number): Promise<boolean> {
  const adapters = memoryAdapters(cap === DEFAULT_CAP ? {} : { maxAnonymousBuckets: cap });
  const petstore = createPetstore({ ...adapters });
  const request = () => new Request("http://petstore.test/v1/pets");
  // Warm the path up on one address, so compiled code and caches are not counted as buckets.
  for (let i = 0; i < 2_000; i++) await petstore.fetch(request(), { clientAddress: "192.0.2.1" });
  await fullGc();
  const start = process.memoryUsage();

  const rows = [
    ["addresses", "buckets held", "heap growth MiB", "RSS growth MiB", "heap bytes/bucket", "RSS bytes/bucket"],
  ];
  const checkpoints: { buckets: number; heap: number; rss: number }[] = [];
  let overCap = false;
  const total = 3 * ADDRESSES;
  for (let i = 0; i < total; i++) {
    // 10.0.0.0/8 holds 16 million distinct addresses.
    const address = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    const response = await petstore.fetch(request(), { clientAddress: address });
    if (response.status !== 401) throw new Error(`an anonymous request answered ${response.status}, not 401`);
    if ((i + 1) % 20_000 === 0) {
      await fullGc();
      const now = process.memoryUsage();
      const buckets = adapters.limiter.size();
      if (buckets > cap) overCap = true;
      const heap = now.heapUsed - start.heapUsed;
      const rss = now.rss - start.rss;
      checkpoints.push({ buckets, heap, rss });
      const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
      rows.push([
        String(i + 1),
        String(buckets),
        mib(heap),
        mib(rss),
        (heap / buckets).toFixed(0),
        (rss / buckets).toFixed(0),
      ]);
    }
  }
  console.log(
    `\nmaxAnonymousBuckets ${cap.toLocaleString("en-US")}${cap === DEFAULT_CAP ? " (the default)" : ""}: ${total.toLocaleString("en-US")} distinct addresses, one request each`,
  );
  console.log(table(rows));

  // Past the cap every new address evicts an old one, so memory must level off. The Map's
  // table may still grow once while deletions churn it, so compare the last third of the run
  // with the middle third rather than with the moment the cap was reached.
  const third = Math.floor(checkpoints.length / 3);
  const peak = (from: number, to: number) => Math.max(...checkpoints.slice(from, to).map((c) => c.heap));
  const middle = peak(third, 2 * third);
  const last = peak(2 * third, checkpoints.length);
  const flat = last <= middle + Math.max(0.05 * middle, 2 ** 20);
  const end = checkpoints.at(-1)!;
  console.log(
    `  buckets never above the cap: ${overCap ? "NO" : "yes"}; heap peak in the last third ${(last / 2 ** 20).toFixed(1)} MiB vs ${(middle / 2 ** 20).toFixed(1)} MiB in the middle third: ${flat ? "flat" : "STILL GROWING"}`,
  );
  console.log(
    `  at the end: ${end.buckets.toLocaleString("en-US")} buckets, ${(end.heap / end.buckets).toFixed(0)} heap bytes and ${(end.rss / end.buckets).toFixed(0)} RSS bytes per bucket`,
  );
  return !overCap && flat;
}

if (values.cap === undefined) {
  console.log(`Memory benchmark on ${isBun ? `Bun ${process.versions.bun}` : `Node ${process.version}`}`);
  runEachCap();
} else {
  process.exitCode = (await measureCap(Number(values.cap))) ? 0 : 1;
}
