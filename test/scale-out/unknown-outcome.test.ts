import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresServer, startPostgres } from "../_support/postgres-server.js";
import { type RedisServer, startRedis } from "../_support/redis-server.js";
import { ensureBinary } from "../e2e/_binary.js";
import { client } from "../e2e/_http.js";
import { binaryServe, cleanUp, createKey, type Server, startServer, stopProcess } from "../e2e/_processes.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

/**
 * A create answered 503 after the storage bound can still commit afterwards
 * (6 of 360 during a 15 s SIGSTOP of PostgreSQL). The 503 says the outcome is unknown and how
 * to learn it. The limits live in Redis here, so that every create gets past them and hangs in
 * its insert (with them in PostgreSQL, the limiter's own statement hangs first, and a 503 there
 * is known to have created nothing).
 */
describe("creates while PostgreSQL hangs (SIGSTOP)", () => {
  // Sixty creates sent while PostgreSQL is stopped, half with an Idempotency-Key; each it reads their outcome.
  let pg: PostgresServer;
  let redis: RedisServer;
  let server: Server | undefined;
  let sql: postgres.Sql;
  let create: (i: number, keyed: boolean) => Promise<Response>;
  let answers: { i: number; keyed: boolean; status: number; message: string }[];
  let late: number;
  const stored = async () =>
    (await sql`SELECT count(*)::int AS n FROM pets WHERE name ~ '^Hang [0-9]{1,2}$'`)[0]!.n as number;

  beforeAll(async () => {
    [pg, redis] = await Promise.all([startPostgres(), startRedis()]);
    const db = await pg.createDatabase("hung");
    sql = postgres(db, { max: 1, onnotice: () => {} });
    const { key } = await createKey(db);
    server = await startServer([...binaryServe(db), "--limiter", redis.url]);
    const api = client(server.url, key);
    create = (i, keyed) =>
      api("/v1/pets", {
        method: "POST",
        headers: keyed ? { "Idempotency-Key": `hang-${i}` } : {},
        json: { name: `Hang ${i}`, categoryId: 1 },
        signal: AbortSignal.timeout(10_000),
      });
    // Warm: the key is cached and the pool holds connections, so the creates below reach PostgreSQL and hang there.
    await Promise.all(Array.from({ length: 10 }, (_, i) => create(1_000 + i, false)));
    pg.signal("SIGSTOP");
    try {
      answers = await Promise.all(
        Array.from({ length: 60 }, async (_, i) => {
          const response = await create(i, i % 2 === 0);
          return {
            i,
            keyed: i % 2 === 0,
            status: response.status,
            message: ((await response.json()) as { message: string }).message,
          };
        }),
      );
    } finally {
      pg.signal("SIGCONT");
    }
  }, 90_000);
  afterAll(async () => {
    await sql?.end();
    if (server) await stopProcess(server.child, "SIGTERM");
    await pg?.destroy();
    await redis?.stop();
  });

  it("are all answered 503", () => {
    expect(answers.map((answer) => answer.status)).toEqual(Array(60).fill(503));
  });

  it("say a keyed create may have been stored, and to retry it with the same Idempotency-Key", () => {
    for (const answer of answers.filter((each) => each.keyed))
      expect(answer.message).toBe(
        "Storage did not confirm the create; the pet may have been stored: retry with the same Idempotency-Key",
      );
  });

  it("say an unkeyed create may have been stored, and to send an Idempotency-Key with every create", () => {
    for (const answer of answers.filter((each) => !each.keyed))
      expect(answer.message).toBe(
        "Storage did not confirm the create; the pet may have been stored: send an Idempotency-Key with every create, so that a retry cannot store a second pet",
      );
  });

  it("are committed, the unkeyed ones at least, once PostgreSQL goes on", async () => {
    // Once it goes on, PostgreSQL runs what it had received: the unkeyed creates commit.
    await expect.poll(stored, { timeout: 10_000 }).toBeGreaterThanOrEqual(30);
    late = await stored();
  });

  it("are answered once each when retried with their keys: created, replayed, or still held (409)", async () => {
    const retried = await Promise.all(
      answers.filter((answer) => answer.keyed).map(async ({ i }) => (await create(i, true)).status),
    );
    expect(retried.filter((status) => status !== 201 && status !== 409)).toEqual([]);
    console.info(
      `60 creates while PostgreSQL was stopped, all answered 503 "may have been stored"; ${late} were committed once it went on (30 without a key); retried with their keys: ${JSON.stringify(Object.fromEntries([201, 409].map((s) => [s, retried.filter((r) => r === s).length])))}`,
    );
  });

  it("never store a pet twice", async () => {
    const rows = await sql`SELECT name FROM pets WHERE name ~ '^Hang [0-9]{1,2}$' GROUP BY name HAVING count(*) > 1`;
    expect(rows).toEqual([]);
  });
});
