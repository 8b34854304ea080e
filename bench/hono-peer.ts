/**
 * A peer to beat: the same API built by hand the way a team would without this project, on
 * Hono under Bun (the app is bench/_hono-app.ts, shared with the Hono-on-Deno peer).
 * Run by bench/run.ts: `bun bench/hono-peer.ts` with BENCH_PORT and BENCH_KEY set.
 */
import { app } from "./_hono-app.js";

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.BENCH_PORT ?? 0),
  development: false,
  fetch: app.fetch,
});
console.log(JSON.stringify({ event: "listening", port: server.port }));
