import {
  migratePostgres,
  postgresAdminTokens,
  postgresIdempotency,
  postgresKeys,
  postgresLimiter,
  postgresStore,
  type PostgresSource,
} from "@petstore/adapters/postgres";
import {
  adminTokensContract,
  apiKeysContract,
  idempotencyContract,
  petStoreContract,
  rateLimiterContract,
} from "@petstore/core/testing";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emptyDataTables, type PgBouncer, type PoolMode, startPgBouncer } from "../_support/pgbouncer.js";
import { type PostgresServer, startPostgres } from "../_support/postgres-server.js";
import { ensureBinary } from "../e2e/_binary.js";
import { client } from "../e2e/_http.js";
import { binaryServe, cleanUp, cli, createKey, startServer, stopProcess } from "../e2e/_processes.js";

/**
 * PostgreSQL behind PgBouncer, in `pool_mode = transaction` (each transaction on whichever
 * server connection is free) and `session`: the migrations (several at once), the four
 * Postgres contract suites through postgres.js as a team would configure it there, and three
 * `petstore serve` through one PgBouncer holding a key's exact limit. The binary finds a pooler
 * in transaction mode at start and prepares no statement (a prepared statement lives on one
 * server connection, and the next transaction may run on another); statement mode, which
 * allows no transaction, is refused in one line.
 */

let pg: PostgresServer;
const bouncers = new Map<PoolMode, PgBouncer>();

beforeAll(async () => {
  ensureBinary();
  pg = await startPostgres();
  for (const mode of ["transaction", "session", "statement"] as const)
    bouncers.set(mode, await startPgBouncer(pg.port, mode));
}, 120_000);

afterAll(async () => {
  await cleanUp();
  await Promise.all([...bouncers.values()].map((bouncer) => bouncer.stop()));
  await pg?.destroy();
});

for (const mode of ["transaction", "session"] as const) {
  describe(`through PgBouncer in ${mode} pooling`, () => {
    const database = `contract_${mode}`;
    /** postgres.js as docs/scaling-out.md says: no prepared statements behind transaction pooling. */
    const clientOptions = { max: 4, prepare: mode !== "transaction", onnotice: () => {} };
    let direct: postgres.Sql;

    beforeAll(async () => {
      await pg.createDatabase(database);
      direct = postgres(pg.url(database), { max: 1, onnotice: () => {} });
      await migratePostgres({ sql: direct });
    });

    afterAll(async () => {
      await direct?.end();
    });

    it("migrates a new database from five clients at once, each under the transaction's advisory lock", async () => {
      await pg.createDatabase(`migrate_${mode}`);
      const clients = Array.from({ length: 5 }, () =>
        postgres(bouncers.get(mode)!.url(`migrate_${mode}`), clientOptions),
      );
      try {
        await Promise.all(clients.map((sql) => migratePostgres({ sql })));
      } finally {
        await Promise.all(clients.map((sql) => sql.end()));
      }
      const check = postgres(pg.url(`migrate_${mode}`), { max: 1, onnotice: () => {} });
      const versions = (
        await check`SELECT version FROM schema_migrations ORDER BY version`.finally(() => check.end())
      ).map((row) => Number(row.version));
      expect(versions.length).toBeGreaterThan(0);
      expect(new Set(versions).size).toBe(versions.length);
    });

    /** Fresh tables (emptied through a direct connection; PgBouncer passes no search_path, so no schema of its own) and a client through PgBouncer. */
    const fixture =
      <T extends object>(adapters: (source: PostgresSource, clock: (() => number) | undefined) => T) =>
      async (clock?: () => number) => {
        await emptyDataTables(direct);
        const sql = postgres(bouncers.get(mode)!.url(database), clientOptions);
        return { ...adapters({ sql }, clock), close: () => sql.end({ timeout: 5 }) };
      };
    const storeFixture = fixture((source, clock) => ({
      store: postgresStore(source),
      idempotency: postgresIdempotency(source, { clock }),
    }));
    petStoreContract(`postgres through pgbouncer (${mode})`, storeFixture);
    idempotencyContract(`postgres through pgbouncer (${mode})`, storeFixture);
    rateLimiterContract(
      `postgres through pgbouncer (${mode})`,
      fixture((source, clock) => ({ limiter: postgresLimiter(source, { clock }) })),
    );
    apiKeysContract(
      `postgres through pgbouncer (${mode})`,
      fixture((source, clock) => ({ keys: postgresKeys(source, { clock }) })),
    );
    adminTokensContract(
      `postgres through pgbouncer (${mode})`,
      fixture((source, clock) => ({ tokens: postgresAdminTokens(source, { clock }) })),
    );
  });
}

describe("petstore serve through PgBouncer", () => {
  it("three servers through one PgBouncer in transaction pooling say so at start, and hold a key's exact limit", async () => {
    await pg.createDatabase("serve_transaction");
    const url = bouncers.get("transaction")!.url("serve_transaction");
    // 30 client connections share PgBouncer's 10 server connections: a burst queues there longer
    // than the default 1 s a request waits for the database, which would answer 503s.
    const servers = await Promise.all(
      [0, 1, 2].map(() =>
        startServer(binaryServe(url), { env: { ...process.env, PETSTORE_DB_BUSY_TIMEOUT_MS: "10000" } }),
      ),
    );
    for (const server of servers) {
      expect(JSON.parse(server.stdout.find((line) => line.includes('"event":"listening"'))!)).toMatchObject({
        dbPooling: "transaction (statements not prepared)",
      });
    }
    // A day's limit, so that no window ends during the burst.
    const { key } = await createKey(url, ["--plan", "free", "--per-minute", "100000", "--per-day", "60"]);
    const statuses = await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const response = await client(servers[i % 3]!.url, key)(i % 2 === 0 ? "/v1/pets?limit=5" : "/v1/pets", {
          ...(i % 2 === 1 && { method: "POST", json: { name: `Burst ${i}`, categoryId: 1 } }),
          signal: AbortSignal.timeout(10_000),
        });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    const tally = statuses.reduce<Record<number, number>>((counts, status) => {
      counts[status] = (counts[status] ?? 0) + 1;
      return counts;
    }, {});
    console.info(
      `pgbouncer, transaction pooling: 300 concurrent requests of a key limited to 60 over three servers: ${JSON.stringify(tally)}`,
    );
    expect(Object.keys(tally).every((status) => ["200", "201", "429"].includes(status))).toBe(true);
    expect((tally[200] ?? 0) + (tally[201] ?? 0)).toBe(60);
    expect(tally[429]).toBe(240);
    const exits = await Promise.all(servers.map((server) => stopProcess(server.child, "SIGTERM")));
    expect(exits).toEqual(servers.map(() => ({ code: 0, signal: null })));
  }, 90_000);

  it("prepares its statements through a pooler in session mode, which keeps one server connection per client", async () => {
    await pg.createDatabase("serve_session");
    const url = bouncers.get("session")!.url("serve_session");
    const server = await startServer(binaryServe(url));
    expect(JSON.parse(server.stdout.find((line) => line.includes('"event":"listening"'))!)).not.toHaveProperty(
      "dbPooling",
    );
    const { key } = await createKey(url);
    const api = client(server.url, key);
    for (let i = 0; i < 20; i++)
      expect((await api("/v1/pets", { method: "POST", json: { name: `Session ${i}`, categoryId: 1 } })).status).toBe(
        201,
      );
    expect((await api("/v1/pets?limit=100")).status).toBe(200);
    await stopProcess(server.child, "SIGTERM");
  }, 60_000);

  it("refuses to start in one line through a pooler in statement mode, which allows no transaction", async () => {
    await pg.createDatabase("serve_statement");
    const url = bouncers.get("statement")!.url("serve_statement");
    const result = await cli([...binaryServe(url).slice(1)]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(
      /cannot open postgres:\/\/127\.0\.0\.1:\d+\/serve_statement: a pooler in statement mode \(PgBouncer's pool_mode = statement\) refused a transaction: use transaction or session pooling/,
    );
  }, 30_000);
});
