/**
 * The benchmark's two hot requests through `petstore.fetch` in one process (no sockets) on a
 * libSQL database file, as the binary opens it: `GET /v1/pets` (20 pets) and `POST /v1/pets`
 * (each a committed write), bearer key, limits on (so every request is one limiter write too).
 * Also the memory adapter on the same requests, for scale.
 *
 *   npx bun --conditions=@petstore/source bench/libsql-hot-path.ts [seconds per case] [only cases containing]
 *
 * For a profile of one case: `npx bun --cpu-prof-md --conditions=@petstore/source bench/libsql-hot-path.ts 5 "libSQL GET /v1/pets, 64"`.
 *
 * Settings: what `connectLibsql` opens: WAL, busy timeout 5000 ms; the adapters' own connection
 * group-commits concurrent writes, fsyncing (`synchronous` FULL) every batch that holds a create
 * and batches of limiter hits alone at least once a second (see WriteOptions in _database.ts).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryAdapters } from "@petstore/adapters/memory";
import { libsqlAdapters, migrateLibsql } from "@petstore/adapters/libsql";
import { connectLibsql } from "@petstore/adapters/libsql/connect";
import { createPetstore, issueApiKey, type Petstore, type Adapters } from "@petstore/core";

const SECONDS = Number(process.argv[2] ?? 3);
const ONLY = process.argv[3] ?? "";
const CONCURRENCY = [1, 64];

async function measure(label: string, inFlight: number, run: () => Promise<void>): Promise<void> {
  if (!label.includes(ONLY)) return;
  // Warm up (JIT, page cache, prepared statements), then a fixed time.
  const warmUntil = performance.now() + 300;
  while (performance.now() < warmUntil) await run();
  let count = 0;
  const started = performance.now();
  const until = started + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < until) {
        await run();
        count++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const perSecond = count / seconds;
  console.log(
    `${label.padEnd(40)} ${perSecond.toFixed(0).padStart(7)} req/s ${(1e6 / perSecond).toFixed(1).padStart(7)} µs/request`,
  );
}

async function bench(name: string, adapters: Adapters): Promise<void> {
  // Limits far above what the bench sends: every request is admitted and counted.
  const { key } = await issueApiKey(adapters.keys, { plan: "enterprise", perMinute: 1e9, perDay: 1e9 });
  for (let i = 0; i < 20; i++) await adapters.store.createPet({ name: `Pet ${i}`, categoryId: 1, status: "available" });
  const petstore: Petstore = createPetstore({ ...adapters });
  const headers = { Authorization: `Bearer ${key}` };
  const body = JSON.stringify({ name: "Rex", categoryId: 1, status: "available" });
  const list = async () => {
    const response = await petstore.fetch(new Request("http://petstore.test/v1/pets", { headers }), {
      clientAddress: "127.0.0.1",
    });
    if (response.status !== 200) throw new Error(`GET /v1/pets answered ${response.status}`);
    await response.arrayBuffer();
  };
  const create = async () => {
    const response = await petstore.fetch(
      new Request("http://petstore.test/v1/pets", {
        method: "POST",
        headers: { ...headers, "Content-Type": "application/json" },
        body,
      }),
      { clientAddress: "127.0.0.1" },
    );
    if (response.status !== 201) throw new Error(`POST /v1/pets answered ${response.status}`);
    await response.arrayBuffer();
  };
  console.log(`\n${name}`);
  const prefix = name.startsWith("libSQL") ? "libSQL" : "memory";
  for (const inFlight of CONCURRENCY) await measure(`${prefix} GET /v1/pets, ${inFlight} in flight`, inFlight, list);
  for (const inFlight of CONCURRENCY) await measure(`${prefix} POST /v1/pets, ${inFlight} in flight`, inFlight, create);
}

const dir = await mkdtemp(join(tmpdir(), "petstore-bench-"));
const client = await connectLibsql({ url: `file:${join(dir, "bench.db")}` });
try {
  await migrateLibsql(client);
  const settings = ["journal_mode", "busy_timeout"].map(
    async (pragma) => `${pragma}=${Object.values((await client.execute(`PRAGMA ${pragma}`))[0]!)[0]}`,
  );
  console.log(
    `${typeof Bun === "undefined" ? `node ${process.version}` : `bun ${Bun.version}`}, ${SECONDS} s per case`,
  );
  await bench(`libSQL file (${(await Promise.all(settings)).join(", ")})`, libsqlAdapters(client));
  await bench("memory adapters, for scale", memoryAdapters());
} finally {
  client.close();
  await rm(dir, { recursive: true, force: true });
}
