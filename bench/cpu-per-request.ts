/**
 * Does a server cost more per request as it holds more pets? Consecutive short runs against
 * one server of each variant, printing per run its rate and the server's CPU time per request
 * (user + system from /proc/PID/stat), which a busy machine disturbs far less than throughput.
 * POST keeps every pet, so each run holds more than the one before.
 *
 *   npx tsx --conditions=@petstore/source bench/cpu-per-request.ts [--variants elysia,binary-memory] [--endpoint POST|GET] [--runs 8] [--duration 3]
 *
 * Linux only (/proc). Build the binary first (`npm run bench` does when it is stale).
 */
import { parseArgs } from "node:util";
import { loadGenerator } from "./_load.js";
import { cpuMs, freePort } from "./_processes.js";
import { petsStored, VARIANTS } from "./_variants.js";

const { values } = parseArgs({
  options: {
    variants: { type: "string", default: "elysia,binary-memory" },
    endpoint: { type: "string", default: "POST" },
    runs: { type: "string", default: "8" },
    duration: { type: "string", default: "3" },
  },
});

const load = loadGenerator();
const post = values.endpoint === "POST";
for (const name of values.variants.split(",")) {
  const variant = VARIANTS.find((v) => v.name === name);
  if (!variant) throw new Error(`unknown variant ${name} (known: ${VARIANTS.map((v) => v.name).join(", ")})`);
  const server = await variant.start(await freePort());
  try {
    const runs: string[] = [];
    for (let i = 0; i < Number(values.runs); i++) {
      const before = cpuMs(server.started.pid)!;
      const request = post
        ? {
            url: `${server.url}/v1/pets`,
            method: "POST" as const,
            key: server.key,
            body: JSON.stringify({ name: "Rex", categoryId: 1 }),
          }
        : { url: `${server.url}/v1/pets`, method: "GET" as const, key: server.key };
      const result = await load.run(request, Number(values.duration), 64);
      runs.push(
        `${Math.round(result.perSecond / 1000)}k/s ${(((cpuMs(server.started.pid)! - before) * 1000) / result.requests).toFixed(1)} µs`,
      );
    }
    console.log(`${name.padEnd(14)} ${values.endpoint} ${runs.join("  ")}  pets held ${await petsStored(server)}`);
  } finally {
    await server.close();
  }
}
