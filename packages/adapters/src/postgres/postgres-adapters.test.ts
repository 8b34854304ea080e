import type { WindowPair } from "@petstore/core";
import { type IdempotencyClaim, StorageUnavailableError } from "@petstore/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Isolation, usePostgresDatabase } from "../../../../test/_support/postgres-database.js";
import { type PostgresServer, startPostgres } from "../../../../test/_support/postgres-server.js";
import postgres from "postgres";
import { engineOf } from "./_engine.js";
import { checkPostgres, migratePostgres, postgresAdapters, postgresIdempotency, postgresStore } from "./index.js";

const T0 = Date.UTC(2030, 0, 15, 12, 0, 0);

// Under each default isolation an operator may give the database.
describe.each<Isolation>(["read committed", "repeatable read", "serializable"])(
  "Postgres adapters on many clients at once (each its own pool, as processes have), default isolation %s",
  (isolation) => {
    const database = usePostgresDatabase({ isolation });

    it("runs every statement under the database's default isolation (the adapters set theirs themselves)", async () => {
      const { source, close } = await database.fresh();
      try {
        expect((await source.sql.unsafe("SHOW transaction_isolation"))[0]).toEqual({
          transaction_isolation: isolation,
        });
      } finally {
        await close();
      }
    });

    it.skipIf(isolation === "read committed")(
      "runs each statement in a READ COMMITTED transaction once one alone met a serialization failure, and loses no update",
      async () => {
        const { source, close } = await database.fresh();
        try {
          await source.sql.unsafe("CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL)");
          await source.sql.unsafe("INSERT INTO counter VALUES (1, 0)");
          const engine = engineOf(source);
          const isolationNow = async () =>
            (await engine.read("SHOW transaction_isolation")).rows[0]!.transaction_isolation;
          expect(await isolationNow()).toBe(isolation);
          // Another client holds the row while the engine's update waits for it: once it commits,
          // the update, alone under this default, meets a serialization failure.
          const other = await database.client(source);
          let release!: () => void;
          let rowHeld!: () => void;
          const held = new Promise<void>((resolve) => (rowHeld = resolve));
          const holding = other.sql.begin(async (transaction) => {
            await transaction.unsafe("UPDATE counter SET n = n + 1 WHERE id = 1");
            await new Promise<void>((resolve) => {
              release = resolve;
              rowHeld();
            });
          });
          await held;
          const updating = engine.read("UPDATE counter SET n = n + 1 WHERE id = 1 RETURNING n");
          // Released only once the update waits for the row's lock, as a third client sees it.
          const watcher = await database.client(source);
          const waitingForTheRow = async () =>
            (
              await watcher.sql.unsafe(
                "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE counter%'",
              )
            )[0]!.n > 0;
          for (const deadline = performance.now() + 10_000; !(await waitingForTheRow()); ) {
            if (performance.now() > deadline) throw new Error("the engine's update never waited for the held row");
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          release();
          await holding;
          expect((await updating).rows[0]!.n).toBe(2);
          expect(await isolationNow()).toBe("read committed");
          expect((await engine.read("SELECT n FROM counter")).rows[0]!.n).toBe(2);
        } finally {
          await close();
        }
      },
    );

    it("admits exactly the limit and bans after the threshold when 300 hits on one bucket come through four clients at once", () =>
      database.onClients(4, async (sources) => {
        const limiters = sources.map((each) => postgresAdapters(each, { clock: () => T0 }).limiter);
        const windows: WindowPair = [
          { name: "minute", limit: 60, seconds: 60 },
          { name: "day", limit: 1_000, seconds: 86_400 },
        ];
        const decisions = await Promise.all(
          Array.from({ length: 300 }, (_, i) =>
            limiters[i % 4]!.hit({ bucket: "key:burst", windows, ban: { threshold: 30, seconds: 600 } }),
          ),
        );
        expect(decisions.filter((decision) => decision.allowed)).toHaveLength(60);
        expect(decisions.filter((decision) => decision.bannedUntil !== undefined)).toHaveLength(210);
      }));

    it("hands out unique ids that commit in order: every list taken meanwhile is a prefix of the final one", () =>
      database.onClients(4, async (sources) => {
        const stores = sources.map((each) => postgresStore(each));
        const lists: number[][] = [];
        const creating = Promise.all(
          Array.from({ length: 200 }, (_, i) => stores[i % 4]!.createPet({ name: `Pet ${i}`, categoryId: 1 })),
        );
        // Lists taken while the creates commit: none may miss an id below one it shows.
        for (let i = 0; i < 10; i++) lists.push((await stores[i % 4]!.listPets({ limit: 100 })).map((pet) => pet.id));
        const created = await creating;
        const ids = created.map((pet) => pet.id);
        expect(new Set(ids).size).toBe(200);
        const all = [];
        for (let afterId = 0; ; ) {
          const page = await stores[0]!.listPets({ limit: 100, afterId });
          if (page.length === 0) break;
          all.push(...page.map((pet) => pet.id));
          afterId = page.at(-1)!.id;
        }
        expect(all).toEqual([...ids].sort((a, b) => a - b));
        for (const list of lists) expect(list).toEqual(all.slice(0, list.length));
      }));

    it("grants one claim of one Idempotency-Key sent through many clients at once, which creates one pet", () =>
      database.onClients(6, async (sources) => {
        const claim: IdempotencyClaim = { scope: "key_1", key: "order-42", fingerprint: "f1" };
        const attempts = await Promise.all(
          Array.from({ length: 24 }, async (_, i) => {
            const each = sources[i % sources.length]!;
            const result = await postgresIdempotency(each).claim(claim);
            if (result.state !== "claimed") return result.state;
            const done = await postgresStore(each).createClaimedPet({ name: "Rex", categoryId: 1 }, claim);
            return done.state === "created" ? done.pet.id : done.state;
          }),
        );
        const created = attempts.filter((attempt) => typeof attempt === "number");
        expect(created).toHaveLength(1);
        expect(attempts.filter((attempt) => attempt === "in_progress" || attempt === "completed")).toHaveLength(23);
        expect(await postgresIdempotency(sources[0]!).claim(claim)).toEqual({ state: "completed", petId: created[0] });
        expect(await postgresStore(sources[0]!).listPets({ limit: 10 })).toHaveLength(1);
      }));

    it("migrates once when several clients migrate at once, recording the version in schema_migrations", () =>
      database.onClients(5, async (sources) => {
        await sources[0]!.sql.unsafe(
          "DROP TABLE pets, orders, api_keys, rate_limits, idempotency_keys, health_probe, key_audit, settings, admin_tokens, key_usage_minutes, key_usage_days, accounts, schema_migrations",
        );
        await Promise.all(sources.map((each) => migratePostgres(each)));
        const history = await sources[0]!.sql.unsafe("SELECT version, name FROM schema_migrations ORDER BY version");
        expect(Array.from(history, (row) => row.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        await checkPostgres(sources[0]!);
      }));
  },
);

describe("the audit trail in Postgres", () => {
  const database = usePostgresDatabase({ isolation: "read committed" });

  it("refuses to edit, delete or truncate it, whoever tries", async () => {
    const { source, close } = await database.fresh();
    try {
      const { keys } = postgresAdapters(source);
      await keys.audit("unban", "key_a", { actor: { who: "test" } });
      for (const statement of ["UPDATE key_audit SET actor = 'x'", "DELETE FROM key_audit", "TRUNCATE key_audit"])
        await expect(source.sql.unsafe(statement), statement).rejects.toThrow("the audit trail is never edited");
      expect(await keys.auditTrail({ limit: 10 })).toHaveLength(1);
    } finally {
      await close();
    }
  });
});

describe("Postgres adapters when the server fails", () => {
  let server: PostgresServer;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(() => server?.destroy());

  it("answers storage unavailable while the server is down, and serves again once it is back, without a new client", async () => {
    const sql = postgres(server.url(), { max: 4, onnotice: () => {}, connect_timeout: 2 });
    try {
      const source = { sql, timeoutMs: 3_000 };
      await migratePostgres(source);
      const { store, limiter } = postgresAdapters(source);
      const rex = await store.createPet({ name: "Rex", categoryId: 1 });
      await server.stop();
      await expect(store.createPet({ name: "Fido", categoryId: 1 })).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(checkPostgres(source)).rejects.toBeInstanceOf(StorageUnavailableError);
      const windows: WindowPair = [
        { name: "minute", limit: 5, seconds: 60 },
        { name: "day", limit: 50, seconds: 86_400 },
      ];
      await expect(
        limiter.hit({ bucket: "key:a", windows, ban: { threshold: 3, seconds: 60 } }),
      ).rejects.toBeInstanceOf(StorageUnavailableError);
      await server.start();
      await checkPostgres(source);
      expect(await store.getPet(rex.id)).toEqual(rex);
      expect((await store.createPet({ name: "Fido", categoryId: 1 })).id).toBeGreaterThan(rex.id);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  it("answers a bucket's hit that waited for the one before it within the same bound, counted from when it was asked", async () => {
    const sql = postgres(server.url(), { max: 2, onnotice: () => {} });
    const blocker = postgres(server.url(), { max: 1, onnotice: () => {} });
    let release!: () => void;
    try {
      await migratePostgres({ sql });
      const { limiter } = postgresAdapters({ sql, timeoutMs: 1_000 });
      const windows: WindowPair = [
        { name: "minute", limit: 60, seconds: 60 },
        { name: "day", limit: 1_000, seconds: 86_400 },
      ];
      const hit = () => limiter.hit({ bucket: "key:waits", windows, ban: { threshold: 30, seconds: 600 } });
      await hit();
      // Another session holds the bucket's row: the first hit waits for it, as on a hung server.
      const held = new Promise<void>((resolve) => (release = resolve));
      const locking = blocker.begin(async (tx) => {
        await tx.unsafe("SELECT 1 FROM rate_limits WHERE bucket = 'key:waits' FOR UPDATE");
        await held;
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const first = hit().catch((error: Error) => error.message);
      await new Promise((resolve) => setTimeout(resolve, 500));
      // Asked while the first is in flight: its statement waits for the first to settle (at 1 s).
      const askedAt = performance.now();
      const second = await hit().catch((error: Error) => error.message);
      const tookMs = performance.now() - askedAt;
      expect(await first).toMatch(/did not answer within 1000 ms/);
      expect(second).toMatch(/did not answer within 1000 ms/);
      // Counted from when it was asked: about 1 s, where its own bound after the wait made 1.5 s.
      expect(tookMs).toBeLessThan(1_300);
      release();
      await locking;
    } finally {
      release?.();
      await blocker.end();
      await sql.end();
    }
  });

  it("fails a query past its timeout while the server hangs, and at once once maxQueued are waiting", async () => {
    const sql = postgres(server.url(), { max: 2, onnotice: () => {} });
    try {
      await migratePostgres({ sql });
      const source = { sql, timeoutMs: 300, maxQueued: 3 };
      const store = postgresStore(source);
      await store.listPets({ limit: 1 });
      // Another session holds an exclusive lock on pets: reads of pets wait, as on a hung server.
      const blocker = postgres(server.url(), { max: 1, onnotice: () => {} });
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const locking = blocker.begin(async (tx) => {
        await tx.unsafe("LOCK TABLE pets IN ACCESS EXCLUSIVE MODE");
        await held;
      });
      try {
        const granted = async () =>
          (
            await sql.unsafe(
              "SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'pets'::regclass AND mode = 'AccessExclusiveLock' AND granted",
            )
          )[0]!.n;
        await expect.poll(granted, { timeout: 5_000 }).toBe(1);
        const waiting = [store.listPets({ limit: 1 }), store.listPets({ limit: 1 }), store.listPets({ limit: 1 })];
        // A fourth finds three already waiting: refused at once, not queued.
        await expect(store.listPets({ limit: 1 })).rejects.toThrow(/already waiting/);
        for (const each of waiting) await expect(each).rejects.toThrow(/did not answer within 300 ms/);
      } finally {
        release();
        await locking;
        await blocker.end();
      }
      // The waiting queries finish once the lock is gone: the bound frees up by itself.
      await expect
        .poll(
          async () =>
            await store.listPets({ limit: 1 }).then(
              () => "served",
              () => "failed",
            ),
          { timeout: 5_000 },
        )
        .toBe("served");
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
});
