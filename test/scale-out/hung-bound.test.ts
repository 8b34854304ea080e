import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresServer, startPostgres } from "../_support/postgres-server.js";
import { ensureBinary } from "../e2e/_binary.js";
import { client } from "../e2e/_http.js";
import { binaryServe, cleanUp, createKey, startServer, stopProcess } from "../e2e/_processes.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

/** The bound docs/scaling-out.md gives for a 503 while PostgreSQL hangs, seen by a client among 200. */
const DOCUMENTED_BOUND_MS = 1_500;

/**
 * With 200 clients and PostgreSQL hung, 409 of 12,275 503s took over 1.1 s (up
 * to 1.34 s) against the documented 1 s: the query bound is 1 s, but a request's answer also
 * waits for the event loop that 200 others share, and its client measures its own queueing.
 */
describe("200 clients while PostgreSQL hangs (SIGSTOP)", () => {
  let pg: PostgresServer;
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(() => pg?.destroy());

  it(`get every 503 within the documented ${DOCUMENTED_BOUND_MS / 1000} s`, async () => {
    const db = await pg.createDatabase("bound");
    const { key } = await createKey(db);
    const server = await startServer(binaryServe(db));
    const api = client(server.url, key);
    expect((await api("/v1/pets")).status).toBe(200);
    const took: number[] = [];
    const statuses = new Map<number, number>();
    pg.signal("SIGSTOP");
    try {
      const began = performance.now();
      await Promise.all(
        Array.from({ length: 200 }, async (_, i) => {
          while (performance.now() - began < 4_000) {
            const sent = performance.now();
            const response = await api(i % 2 === 0 ? "/v1/pets" : "/v1/pets?limit=1", {
              signal: AbortSignal.timeout(10_000),
            });
            await response.body?.cancel();
            took.push(performance.now() - sent);
            statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          }
        }),
      );
    } finally {
      pg.signal("SIGCONT");
    }
    took.sort((a, b) => a - b);
    // As the server measured them (its access log): from the request reaching the API to the answer.
    const served = server.stdout
      .filter((line) => line.includes('"status":503'))
      .map((line) => (JSON.parse(line) as { durationMs: number }).durationMs)
      .sort((a, b) => a - b);
    const over = (ms: number) => took.filter((each) => each > ms).length;
    console.info(
      `200 clients for 4 s, PostgreSQL stopped: answers ${JSON.stringify(Object.fromEntries(statuses))}; median ${Math.round(took[took.length >> 1]!)} ms, p99 ${Math.round(took[Math.floor(took.length * 0.99)]!)} ms, max ${Math.round(took.at(-1)!)} ms; over 1.1 s: ${over(1_100)}, over 1.5 s: ${over(1_500)}; the server's own durations: median ${Math.round(served[served.length >> 1]!)} ms, max ${Math.round(served.at(-1)!)} ms`,
    );
    expect([...statuses.keys()]).toEqual([503]);
    expect(took.at(-1)!).toBeLessThanOrEqual(DOCUMENTED_BOUND_MS);
    // The server keeps the 1 s query bound itself: the rest is queueing before and after it.
    expect(served.at(-1)!).toBeLessThanOrEqual(1_100);
    await stopProcess(server.child, "SIGTERM");
  }, 90_000);
});
