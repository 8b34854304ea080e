/**
 * The Hono peer under Deno: the same app as bench/hono-peer.ts (bench/_hono-app.ts) on
 * `Deno.serve`, the peer of the binary's source under Deno. Its counters and pets are in
 * memory, or with BENCH_DB=PATH in a SQLite file through Deno's `node:sqlite`
 * (bench/_peer-sqlite.ts; BENCH_SYNCHRONOUS FULL, the default, or NORMAL).
 * Run by bench/run.ts: `deno run ... bench/hono-deno-peer.ts` with BENCH_PORT and BENCH_KEY set.
 */
import { storeIn } from "./_peer.js";
import { type SqliteDatabase, sqliteStorage, synchronousFromEnv } from "./_peer-sqlite.js";
import { app } from "./_hono-app.js";

interface DenoRuntime {
  serve(
    options: { hostname: string; port: number; onListen: (address: { port: number }) => void },
    handler: (request: Request) => Response | Promise<Response>,
  ): unknown;
}

const file = process.env.BENCH_DB;
if (file) {
  // Not in this repository's Node type definitions (Node 20); Deno has it.
  const { DatabaseSync } = (await import(["node", "sqlite"].join(":"))) as {
    DatabaseSync: new (path: string) => SqliteDatabase;
  };
  storeIn(sqliteStorage(new DatabaseSync(file), synchronousFromEnv(process.env.BENCH_SYNCHRONOUS)));
}

const deno = (globalThis as unknown as { Deno: DenoRuntime }).Deno;
deno.serve(
  {
    hostname: "127.0.0.1",
    port: Number(process.env.BENCH_PORT ?? 0),
    onListen: ({ port }) => console.log(JSON.stringify({ event: "listening", port })),
  },
  app.fetch,
);
