/**
 * Whether the WAL fsync off the event loop earns its place: `POST /v1/pets` through
 * `petstore.fetch` in one process on a libSQL file, 64 in flight, with the local engine's two
 * ways of making a create durable before its 201, alternating in one run:
 *   - "wal fsync":  batches commit with synchronous NORMAL, the WAL is fsynced on a worker
 *                   thread (what `connectLibsql` does where it can open the WAL);
 *   - "FULL":       SQLite's own synchronous FULL inside the same group commit, on the loop.
 *
 *   npx tsx --conditions=@petstore/source bench/commit-durability.ts [requests] [rounds]
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { libsqlAdapters, migrateLibsql } from "@petstore/adapters/libsql";
import { createPetstore, issueApiKey } from "@petstore/core";
import NativeDatabase from "libsql";
import { walSyncOf } from "../packages/adapters/src/libsql/local/_wal-sync.js";
import { localEngine } from "../packages/adapters/src/libsql/local/local-engine.js";

const REQUESTS = Number(process.argv[2] ?? 20_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const IN_FLIGHT = 64;

async function postsPerSecond(withWalSync: boolean): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), "petstore-durability-"));
  const path = join(dir, "bench.db");
  const connection = new NativeDatabase(path, { timeout: 5_000 });
  connection.exec("PRAGMA journal_mode = WAL");
  const walSync = withWalSync ? walSyncOf(path) : undefined;
  const engine = localEngine(() => connection, walSync ? { walSync } : {});
  const db = { engine, execute: async () => [], close: () => engine.close() };
  try {
    await migrateLibsql(db);
    const adapters = libsqlAdapters(db);
    const { key } = await issueApiKey(adapters.keys, { plan: "enterprise", perMinute: 1e9, perDay: 1e9 });
    const petstore = createPetstore(adapters);
    const post = async () => {
      const response = await petstore.fetch(
        new Request("http://petstore.test/v1/pets", {
          method: "POST",
          headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
          body: '{"name":"Rex","categoryId":1}',
        }),
        { clientAddress: "127.0.0.1" },
      );
      if (response.status !== 201) throw new Error(`POST answered ${response.status}`);
    };
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next++ < REQUESTS) await post();
      }),
    );
    return REQUESTS / ((performance.now() - started) / 1000);
  } finally {
    db.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const results: Record<string, number[]> = { "wal fsync": [], FULL: [] };
for (let round = 1; round <= ROUNDS; round++) {
  for (const [name, withWalSync] of [
    ["wal fsync", true],
    ["FULL", false],
  ] as const) {
    const rate = await postsPerSecond(withWalSync);
    results[name]!.push(rate);
    console.log(`round ${round}  ${name.padEnd(9)} ${rate.toFixed(0).padStart(7)} POST/s`);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const [wal, full] = [median(results["wal fsync"]!), median(results.FULL!)];
console.log(
  `median: wal fsync ${wal.toFixed(0)}/s, FULL ${full.toFixed(0)}/s: the WAL fsync off the loop is ${((wal / full - 1) * 100).toFixed(0)}% faster`,
);
