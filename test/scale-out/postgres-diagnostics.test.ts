import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresServer, startPostgres } from "../_support/postgres-server.js";
import { ensureBinary } from "../e2e/_binary.js";
import { client } from "../e2e/_http.js";
import { binaryServe, cleanUp, createKey, type Server, startServer, stopProcess, waitFor } from "../e2e/_processes.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

/** The JSON lines of a server's stderr whose event is `event`. */
const events = (server: Server, event: string) =>
  server.stderr
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.event === event);

/** GETs every 100 ms until one is answered 200; at most `ms`. */
async function until200(request: () => Promise<Response>, ms = 20_000): Promise<void> {
  await expect.poll(async () => (await request()).status, { timeout: ms, interval: 100 }).toBe(200);
}

/** A PostgreSQL outage logged nothing on stderr (Redis's did). */
describe("a server whose PostgreSQL goes away and comes back", () => {
  let pg: PostgresServer;
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(() => pg?.destroy());

  it("logs one line when it is lost, with the reason, and one when it is back", async () => {
    const db = await pg.createDatabase("outage");
    const { key } = await createKey(db);
    const server = await startServer(binaryServe(db));
    const api = client(server.url, key);
    expect((await api("/v1/pets")).status).toBe(200);
    await pg.stop();
    try {
      for (let i = 0; i < 20; i++)
        expect((await api("/v1/pets", { method: "POST", json: { name: "Gone", categoryId: 1 } })).status).toBe(503);
      await waitFor(() => events(server, "storage unavailable").length > 0);
    } finally {
      await pg.start();
    }
    await until200(() => api("/v1/pets"));
    await waitFor(() => events(server, "storage available again").length > 0);
    const lost = events(server, "storage unavailable");
    const back = events(server, "storage available again");
    console.info(
      `PostgreSQL stopped and started: ${lost.length} 'storage unavailable' line (${String(lost[0]?.reason)}), ${back.length} 'storage available again' (${String(back[0]?.unavailableMs)} ms)`,
    );
    expect(lost).toEqual([
      expect.objectContaining({
        level: "warn",
        reason: expect.stringMatching(/^the Postgres server (is unreachable|cannot serve now)/),
      }),
    ]);
    expect(back).toEqual([expect.objectContaining({ level: "warn", unavailableMs: expect.any(Number) })]);
    await stopProcess(server.child, "SIGTERM");
  }, 60_000);

  describe("two hangs of 2.5 s, 1.5 s apart, under four clients", () => {
    // One server, its PostgreSQL stopped twice (SIGSTOP) while four clients ask; each it reads the lines logged.
    let server: Server | undefined;
    const statuses = new Map<number, number>();
    let lost: Record<string, unknown>[];
    let back: Record<string, unknown>[];

    beforeAll(async () => {
      const db = await pg.createDatabase("two_outages");
      const { key } = await createKey(db);
      server = await startServer(binaryServe(db));
      const api = client(server.url, key);
      let running = true;
      // Four clients, each a request at a time: a hung request waits for its 1 s bound, the others go on.
      const load = Promise.all(
        Array.from({ length: 4 }, async () => {
          while (running) {
            const response = await api("/v1/pets?limit=1");
            await response.body?.cancel();
            statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        }),
      );
      const hang = async (ms: number) => {
        pg.signal("SIGSTOP");
        await new Promise((resolve) => setTimeout(resolve, ms));
        pg.signal("SIGCONT");
      };
      try {
        await waitFor(() => (statuses.get(200) ?? 0) > 10);
        await hang(2_500);
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        await hang(2_500);
        await waitFor(() => events(server!, "storage available again").length >= 2, 15_000);
      } finally {
        running = false;
        await load;
      }
      lost = events(server, "storage unavailable");
      back = events(server, "storage available again");
      console.info(
        `two PostgreSQL hangs of 2.5 s, 1.5 s apart: ${lost.length} 'storage unavailable' and ${back.length} 'storage available again' lines (${back.map((line) => `${String(line.unavailableMs)} ms, ${String(line.answered503)} answered 503`).join("; ")}); answers ${JSON.stringify(Object.fromEntries(statuses))}`,
      );
    }, 60_000);
    afterAll(async () => {
      if (server) await stopProcess(server.child, "SIGTERM");
    });

    it("logs them as two pairs of lines, lost and back", () => {
      expect(lost).toHaveLength(2);
      expect(back).toHaveLength(2);
    });

    it("gives each outage its own length, from its first failure to its first answer after it", () => {
      for (const line of back) {
        // The first failure comes the 1 s bound into the hang.
        expect(line.unavailableMs).toBeGreaterThan(500);
        expect(line.unavailableMs).toBeLessThan(3_000);
        expect(line.outages).toBeUndefined();
      }
    });

    it("counts each outage's 503s, which add up to the 503s the clients got", () => {
      for (const line of back) expect(line.answered503).toBeGreaterThan(0);
      expect(back.reduce((sum, line) => sum + Number(line.answered503), 0)).toBe(statuses.get(503));
    });
  });
});

/**
 * With max_connections=15 and three servers whose pools hold up to 10 each: 1,844
 * of 6,182 requests were 503s, nothing logged the cause, and the idle pools kept every slot.
 * Here the slots left are 3 of 15, so refusals are certain.
 */
describe("three servers on a PostgreSQL with max_connections=15", () => {
  // One crowd of requests on three servers, while another client holds 12 of the 15 slots; each it reads its outcome.
  let pg: PostgresServer;
  let servers: Server[] = [];
  const statuses = new Map<number, number>();
  let lines: Record<string, unknown>[][];
  let loadEnded: number;
  beforeAll(async () => {
    pg = await startPostgres({ settings: { max_connections: "15" } });
    const db = await pg.createDatabase("crowded");
    const { key } = await createKey(db);
    servers = await Promise.all([0, 1, 2].map(() => startServer(binaryServe(db))));
    // Another client holds 12 of the 15 slots: three servers' pools, which send a bucket's hits
    // one statement at a time, would not always fill them by themselves.
    const squatter = postgres(pg.url(), { max: 12, onnotice: () => {} });
    const held = await Promise.all(Array.from({ length: 12 }, () => squatter.reserve()));
    const began = performance.now();
    // 40 clients per server for 3 s: each pool opens every connection it may.
    try {
      await Promise.all(
        Array.from({ length: 120 }, async (_, i) => {
          const api = client(servers[i % 3]!.url, key);
          while (performance.now() - began < 3_000) {
            const response = await api("/v1/pets", {
              method: "POST",
              json: { name: `Crowd ${i}`, categoryId: 1 },
              signal: AbortSignal.timeout(10_000),
            });
            await response.body?.cancel();
            statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          }
        }),
      );
    } finally {
      for (const connection of held) connection.release();
      await squatter.end();
    }
    loadEnded = performance.now();
    lines = servers.map((server) => events(server, "storage unavailable"));
    console.info(
      `max_connections=15, 3 servers x pool 10, 120 clients for 3 s: answers ${JSON.stringify(Object.fromEntries(statuses))}; 'storage unavailable' lines per server ${lines.map((each) => each.length).join(", ")}: ${String(lines.flat()[0]?.reason)}`,
    );
  }, 90_000);
  afterAll(async () => {
    await Promise.all(servers.map((server) => stopProcess(server.child, "SIGTERM")));
    await pg?.destroy();
  });

  it("answers 503 when no connection slot is left", () => {
    expect(statuses.get(503) ?? 0).toBeGreaterThan(0);
  });

  it("logs the cause in the database's own words", () => {
    expect(lines.flat().some((line) => String(line.reason).includes("too many clients"))).toBe(true);
  });

  it("logs each outage once, lost then back, never a line per refused connection", () => {
    // Failures less than 1 s apart are one outage, so a server logs a new one only after it said
    // the last was over (a second of answers without a failure; on a loaded machine a pool can go
    // that long between refused connections).
    for (const server of servers) {
      const outageLines = server.stderr
        .filter((line) => line.startsWith("{"))
        .map((line) => String((JSON.parse(line) as Record<string, unknown>).event))
        .filter((event) => event === "storage unavailable" || event === "storage available again");
      // Alternating: lost, back, lost, back (the last outage may still be settling).
      expect(outageLines).toEqual(
        outageLines.map((_, i) => (i % 2 === 0 ? "storage unavailable" : "storage available again")),
      );
    }
  });

  it("gives the slots back once the load is over, closing idle connections after 10 s", async () => {
    const admin = postgres(pg.url(), { max: 1, onnotice: () => {} });
    try {
      await expect
        .poll(
          async () => (await admin`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = 'crowded'`)[0]!.n,
          { timeout: 20_000, interval: 500 },
        )
        .toBe(0);
      console.info(
        `the servers' connections were all closed ${Math.round((performance.now() - loadEnded) / 1000)} s after the load ended`,
      );
    } finally {
      await admin.end();
    }
  }, 30_000);
});
