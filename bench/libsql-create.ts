import type { WindowPair } from "@petstore/core";
/**
 * Throughput of `POST /v1/pets` through `petstore.fetch` in one process on a libSQL database
 * file, and what one request costs in database calls.
 *
 *   npx tsx --conditions=@petstore/source bench/libsql-create.ts [requests]
 *
 * Settings: what `connectLibsql` opens (WAL, busy timeout 5000 ms, every acknowledged create
 * fsynced with `synchronous` FULL so that it survives a power cut, limiter hits group-committed:
 * see WriteOptions in packages/adapters/src/libsql/_database.ts), then, for comparison, a plain
 * `@libsql/client` (one `execute` per statement, each prepared anew) with `synchronous` NORMAL.
 * bench/libsql-hot-path.ts measures GET and POST at 1 and 64 in flight.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import {
  type LibsqlSource,
  libsqlAdapters,
  libsqlLimiter,
  libsqlStore,
  migrateLibsql,
} from "@petstore/adapters/libsql";
import { connectLibsql } from "@petstore/adapters/libsql/connect";
import { createPetstore, DEFAULT_BAN, issueApiKey } from "@petstore/core";

const REQUESTS = Number(process.argv[2] ?? 3_000);
const IN_FLIGHT = 16;

async function measure(
  label: string,
  count: number,
  run: (i: number) => Promise<unknown>,
  inFlight = 1,
): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) await run(next++);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const perSecond = count / seconds;
  console.log(
    `${label.padEnd(58)} ${perSecond.toFixed(0).padStart(7)} /s ${((seconds / count) * 1e6).toFixed(0).padStart(6)} µs each`,
  );
  return perSecond;
}

/** A source, a statement of the bench's own, and how to close it. */
interface Opened {
  source: LibsqlSource;
  pragma(name: string): Promise<unknown>;
  selectOne(): Promise<unknown>;
  close(): void;
}

async function bench(settings: string, open: (url: string) => Promise<Opened>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "petstore-bench-"));
  const opened = await open(`file:${join(dir, "bench.db")}`);
  const client = opened.source;
  try {
    await migrateLibsql(client);
    const adapters = libsqlAdapters(client);
    // Limits far above what the bench sends: every request is admitted and counted.
    const { key } = await issueApiKey(adapters.keys, { plan: "enterprise", perMinute: 1e9, perDay: 1e9 });
    const petstore = createPetstore({ ...adapters });
    const post = async () => {
      const response = await petstore.fetch(
        new Request("http://petstore.test/v1/pets", {
          method: "POST",
          headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
          body: JSON.stringify({ name: "Rex", categoryId: 1, status: "available" }),
        }),
        { clientAddress: "127.0.0.1" },
      );
      if (response.status !== 201) throw new Error(`POST /v1/pets answered ${response.status}`);
    };
    const synchronous = await opened.pragma("synchronous");
    const journal = await opened.pragma("journal_mode");
    console.log(`\n${settings} (journal_mode=${journal}, synchronous=${synchronous}, ${REQUESTS} requests)`);

    await measure("warm-up", 200, post);
    await measure("POST /v1/pets, one at a time", REQUESTS, post);
    await measure(`POST /v1/pets, ${IN_FLIGHT} in flight`, REQUESTS, post, IN_FLIGHT);

    const limiter = libsqlLimiter(client);
    const store = libsqlStore(client);
    const windows: WindowPair = [
      { name: "minute", limit: 1e9, seconds: 60 },
      { name: "day", limit: 1e9, seconds: 86_400 },
    ];
    await measure("  of which: limiter hit (one upsert)", REQUESTS, () =>
      limiter.hit({ bucket: "key:bench", windows, ban: DEFAULT_BAN }),
    );
    await measure("  of which: createPet (one INSERT ... RETURNING)", REQUESTS, () =>
      store.createPet({ name: "Rex", categoryId: 1 }),
    );
    await measure("  for scale: one SELECT 1", REQUESTS, () => opened.selectOne());
  } finally {
    opened.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await bench("connectLibsql defaults", async (url) => {
  const db = await connectLibsql({ url });
  return {
    source: db,
    pragma: async (name) => Object.values((await db.execute(`PRAGMA ${name}`))[0]!)[0],
    selectOne: () => db.execute("SELECT 1"),
    close: () => db.close(),
  };
});
await bench("a plain @libsql/client with synchronous NORMAL, for comparison", async (url) => {
  // One connection, so that the per-connection PRAGMA covers every statement.
  const client = createClient({ url, timeout: 5_000, concurrency: 1 });
  await client.execute("PRAGMA journal_mode = WAL");
  await client.execute("PRAGMA synchronous = NORMAL");
  return {
    source: { client },
    pragma: async (name) => (await client.execute(`PRAGMA ${name}`)).rows[0]![0],
    selectOne: () => client.execute("SELECT 1"),
    close: () => client.close(),
  };
});
