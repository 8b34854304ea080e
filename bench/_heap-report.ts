/**
 * Preloaded into a server by `bench/profile.ts --heap` (`bun --preload`): on SIGUSR2 it writes
 * the heap as it is and after a full collection to BENCH_HEAP_REPORT (JSON), then a V8-format
 * heap snapshot (for Chrome DevTools) to BENCH_HEAP_SNAPSHOT.
 * Never part of the product: the bench loads it from outside.
 */
import { writeFileSync } from "node:fs";
import { heapStats } from "bun:jsc";

const MIB = 2 ** 20;

function summary() {
  const stats = heapStats();
  const types = Object.entries(stats.objectTypeCounts)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12);
  return {
    heapMiB: stats.heapSize / MIB,
    capacityMiB: stats.heapCapacity / MIB,
    extraMiB: stats.extraMemorySize / MIB,
    objects: stats.objectCount,
    types,
  };
}

process.on("SIGUSR2", () => {
  const live = summary();
  const rss = process.memoryUsage().rss / MIB;
  Bun.gc(true);
  const collected = summary();
  const rssAfterGcMiB = process.memoryUsage().rss / MIB;
  // Last: the snapshot is a string as large as the heap, which would inflate the figures above.
  if (process.env.BENCH_HEAP_SNAPSHOT) writeFileSync(process.env.BENCH_HEAP_SNAPSHOT, Bun.generateHeapSnapshot("v8"));
  writeFileSync(process.env.BENCH_HEAP_REPORT!, JSON.stringify({ rssMiB: rss, live, collected, rssAfterGcMiB }));
});
