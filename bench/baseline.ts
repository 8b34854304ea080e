/**
 * The practical ceiling: a bare `Bun.serve` with no routing, auth, limits or validation.
 * GET answers the 20 seed pets, serialised per request; POST parses the body and echoes it
 * as a new pet with 201. Run by bench/run.ts: `bun bench/baseline.ts` with BENCH_PORT set.
 */
import { SEED_PETS } from "./_seed.js";

const pets = SEED_PETS.map((pet, i) => ({ id: i + 1, ...pet }));
let nextId = pets.length + 1;
const headers = { "Content-Type": "application/json" };

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.BENCH_PORT ?? 0),
  development: false,
  // GET answers synchronously: a Promise per request would lower the ceiling.
  fetch: (request) => {
    if (request.method === "POST") {
      return request
        .json()
        .then((body) => new Response(JSON.stringify({ id: nextId++, ...(body as object) }), { status: 201, headers }));
    }
    return new Response(JSON.stringify(pets), { headers });
  },
});
console.log(JSON.stringify({ event: "listening", port: server.port }));
