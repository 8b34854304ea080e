import { readFileSync } from "node:fs";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresServer, startPostgres } from "../_support/postgres-server.js";
import { ensureBinary } from "../e2e/_binary.js";
import { client } from "../e2e/_http.js";
import { binaryServe, cleanUp, createKey, type Server, startServer, stopProcess, waitFor } from "../e2e/_processes.js";

/**
 * Three `petstore serve` on a PostgreSQL primary and its streaming standby (`pg_basebackup -R`),
 * named by one multi-host URL as libpq users write it
 * (`postgres://h1:p1,h2:p2/db?target_session_attrs=read-write`). Under create load the primary
 * dies (every process SIGKILLed) and the standby is promoted (`pg_ctl promote`): the servers find
 * the new primary by themselves. The primary's WAL sender is stopped (SIGSTOP) a moment before
 * the primary dies, as a standby behind across a slow link: with synchronous replication
 * (`synchronous_commit=on`, `synchronous_standby_names='*'`) no create is answered 201 meanwhile
 * and every pet answered 201 is on the new primary; with asynchronous replication the pets
 * answered while it was behind are lost, and counted.
 */

const REPLICATION = [
  { name: "synchronous", synchronous: true },
  { name: "asynchronous", synchronous: false },
] as const;
/** Every request of this suite gives up after this long: an answer that takes longer counts as a hang. */
const REQUEST_TIMEOUT_MS = 5_000;

const pairs: PostgresServer[] = [];

beforeAll(() => {
  ensureBinary();
});

afterAll(async () => {
  await cleanUp();
  await Promise.all(pairs.map((server) => server.destroy()));
});

/**
 * Polls the primary until its standby streams; for synchronous replication, first makes every
 * commit wait for a standby (set once one exists: before, a commit would wait for ever), and
 * waits until the standby is the synchronous one.
 */
async function streaming(primary: PostgresServer, synchronous: boolean): Promise<void> {
  const sql = postgres(primary.url(), { max: 1, onnotice: () => {} });
  try {
    if (synchronous) {
      await sql`ALTER SYSTEM SET synchronous_commit = 'on'`;
      await sql`ALTER SYSTEM SET synchronous_standby_names = '*'`;
      await sql`SELECT pg_reload_conf()`;
    }
    let rows: unknown[] = [];
    await waitFor(
      async () => {
        const found = await sql`SELECT state, sync_state FROM pg_stat_replication`;
        rows = found;
        return found.some((row) => row.state === "streaming" && (!synchronous || row.sync_state === "sync"));
      },
      20_000,
      { every: 50, what: () => `the standby streaming: ${JSON.stringify(rows)}` },
    );
  } finally {
    await sql.end();
  }
}

/** Sends `signal` to the primary's WAL sender (the process streaming to the standby), by PID. */
async function walSender(primary: PostgresServer, signal: NodeJS.Signals): Promise<void> {
  const sql = postgres(primary.url(), { max: 1, onnotice: () => {} });
  try {
    // Every sender (a standby that reconnected has a new one), each seen stopped before going on.
    const senders = (await sql`SELECT pid FROM pg_stat_replication`).map((row) => Number(row.pid));
    if (senders.length === 0) throw new Error("the primary has no WAL sender to signal");
    for (const pid of senders) process.kill(pid, signal);
    if (signal === "SIGSTOP") {
      const state = (pid: number) => readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "")[0];
      await waitFor(async () => senders.every((pid) => state(pid) === "T"), 2_000, {
        what: `WAL senders ${senders.join(", ")} stopped`,
      });
    }
  } finally {
    await sql.end();
  }
}

/** What one failover under create load showed, as counted by the clients. */
interface FailoverRun {
  /** Every pet answered 201: its id and name (an id may come twice: the new primary's identity restarts). */
  created: { id: number; name: string }[];
  statuses: Map<number, number>;
  /** Answers that were neither 201 nor a well-formed 503, and requests with no answer in time. */
  problems: string[];
  /** The servers that answered 201 after the promotion. */
  recovered: Set<number>;
  slowestMs: number;
  failoverMs: number;
  createdBefore: number;
  /** Pets answered 201 while the standby was behind: what the primary alone had. */
  createdBehind: number;
  /** Pets answered 201 since the sender began to be stopped: the most the standby can lack. */
  sinceStopping: number;
}

/**
 * Twelve workers create pets through `servers` with `key`; after 100 creates the primary's WAL
 * sender stops, the primary dies and the standby is promoted; the run ends 100 creates after all
 * three servers answered 201 from the promoted standby.
 */
async function failOverUnderLoad(
  servers: Server[],
  primary: PostgresServer,
  standby: PostgresServer,
  key: string,
): Promise<FailoverRun> {
  const created: { id: number; name: string }[] = [];
  const statuses = new Map<number, number>();
  const problems: string[] = [];
  const recovered = new Set<number>();
  let promoted = false;
  let stopping = false;
  let slowestMs = 0;
  const worker = async (index: number, n: number) => {
    const api = client(servers[index]!.url, key);
    for (let i = 0; !stopping; i++) {
      const name = `Load ${index}-${n}-${i}`;
      const began = performance.now();
      let response: Response;
      try {
        response = await api("/v1/pets", {
          method: "POST",
          json: { name, categoryId: 1 },
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
      } catch (error) {
        problems.push(`server ${index}: no answer within ${REQUEST_TIMEOUT_MS} ms (${String(error)})`);
        continue;
      }
      const body = (await response.json()) as { id?: number; code?: string };
      slowestMs = Math.max(slowestMs, performance.now() - began);
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      if (response.status === 201) {
        created.push({ id: body.id!, name });
        if (promoted) recovered.add(index);
      } else if (
        response.status === 503 &&
        body.code === "service_unavailable" &&
        Number(response.headers.get("retry-after")) >= 1 &&
        response.headers.get("x-ratelimit-limit") !== null
      ) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      } else {
        problems.push(`server ${index}: ${response.status} ${JSON.stringify(body)}`);
      }
    }
  };
  const workers = [0, 1, 2].flatMap((index) => [0, 1, 2, 3].map((n) => worker(index, n)));
  let failoverMs = 0;
  let createdBefore = 0;
  let createdBehind = 0;
  let sinceStopping = 0;
  try {
    await waitFor(() => created.length >= 100, 30_000, { what: "100 creates before the primary dies" });
    // The standby falls behind, as across a slow link: the primary's WAL sender stops
    // sending (SIGSTOP), and the primary dies then.
    // Counted from once the sender is seen stopped; what was created while it was being
    // found and signalled may or may not have reached the standby.
    const beforeStopping = created.length;
    await walSender(primary, "SIGSTOP");
    const [stoppedAt, whenStopped] = [performance.now(), created.length];
    await waitFor(() => created.length >= whenStopped + 30 || performance.now() - stoppedAt > 1_500, 30_000, {
      what: "30 creates or 1.5 s with the standby behind",
    });
    createdBehind = created.length - whenStopped;
    sinceStopping = created.length - beforeStopping;
    await primary.crash();
    createdBefore = created.length;
    const began = performance.now();
    await standby.promote();
    promoted = true;
    await waitFor(() => recovered.size === 3, 30_000, {
      what: "201s from all three servers on the promoted standby",
    });
    failoverMs = performance.now() - began;
    const at = created.length;
    await waitFor(() => created.length >= at + 100, 30_000, { what: "100 more creates on the new primary" });
  } finally {
    stopping = true;
    await Promise.all(workers);
  }
  return { created, statuses, problems, recovered, slowestMs, failoverMs, createdBefore, createdBehind, sinceStopping };
}

/** The pets of `created` not on `standby` with the name they were answered with. */
async function lostOn(standby: PostgresServer, created: FailoverRun["created"]): Promise<FailoverRun["created"]> {
  const sql = postgres(standby.url("petstore"), { max: 1, onnotice: () => {} });
  try {
    const stored = new Map(
      (await sql`SELECT id, name FROM pets WHERE name LIKE 'Load %'`).map((row) => [
        Number(row.id),
        row.name as string,
      ]),
    );
    return created.filter(({ id, name }) => stored.get(id) !== name);
  } finally {
    await sql.end();
  }
}

for (const replication of REPLICATION) {
  describe(`three servers on a PostgreSQL primary and its standby, ${replication.name} replication`, () => {
    let primary: PostgresServer;
    let standby: PostgresServer;
    let url: string;
    let servers: Server[];

    beforeAll(async () => {
      primary = await startPostgres();
      pairs.push(primary);
      await primary.createDatabase("petstore");
      standby = await startPostgres({ standbyOf: primary });
      pairs.push(standby);
      await streaming(primary, replication.synchronous);
      url = `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/petstore?target_session_attrs=read-write`;
      servers = await Promise.all([0, 1, 2].map(() => startServer(binaryServe(url))));
    }, 120_000);

    it("names both hosts at start, and serves from the primary", async () => {
      const listening = JSON.parse(servers[0]!.stdout.find((line) => line.includes('"event":"listening"'))!) as {
        db: string;
      };
      expect(listening.db).toBe(`postgres://127.0.0.1:${primary.port},127.0.0.1:${standby.port}/petstore`);
      const { key } = await createKey(url);
      const created = await client(servers[1]!.url, key)("/v1/pets", {
        method: "POST",
        json: { name: "First", categoryId: 1 },
      });
      expect(created.status).toBe(201);
    }, 30_000);

    describe("when the primary dies under create load", () => {
      let run: FailoverRun;
      let lost: FailoverRun["created"];
      /** Ids answered 201 for two different pets: a lost pet's id is handed out again. */
      let answeredTwice: number;
      beforeAll(async () => {
        const { key } = await createKey(url);
        run = await failOverUnderLoad(servers, primary, standby, key);
        lost = await lostOn(standby, run.created);
        answeredTwice = run.created.length - new Set(run.created.map(({ id }) => id)).size;
        console.info(
          `postgres standby, ${replication.name} replication: ${run.createdBefore} pets answered 201 before the primary died, ${run.created.length} in all; ` +
            `all three servers served from the promoted standby ${Math.round(run.failoverMs)} ms after pg_ctl promote began; ` +
            `${run.createdBehind} answered 201 while the standby was behind (${run.sinceStopping} since its sender began to be stopped); ${lost.length} answered 201 and not on the new primary, ${answeredTwice} ids answered 201 for two different pets; answers ${JSON.stringify(Object.fromEntries(run.statuses))}; slowest ${Math.round(run.slowestMs)} ms`,
        );
      }, 120_000);

      it("finds the promoted standby by itself: all three servers answer 201 from it", () => {
        expect([...run.recovered].sort()).toEqual([0, 1, 2]);
      });

      it("answers every create with 201 or a 503 that says when to retry", () => {
        expect(run.problems).toEqual([]);
      });

      it("answers every create within the request timeout", () => {
        expect(run.slowestMs).toBeLessThan(REQUEST_TIMEOUT_MS);
      });

      if (replication.synchronous) {
        // A commit waits for the standby: none is answered while it is behind (but those sent
        // before it stopped), none is lost, no id is handed out twice.
        it("answers no create while the standby is behind, but the twelve workers' already committed", () => {
          expect(run.createdBehind).toBeLessThanOrEqual(12);
        });

        it("loses no pet answered 201", () => {
          expect(lost).toEqual([]);
        });

        it("hands out no id twice", () => {
          expect(answeredTwice).toBe(0);
        });
      } else {
        // Asynchronous: the pets the standby had not received are lost (those answered while it
        // was behind, and some sent just before), and their ids are handed out again.
        it("answers creates while the standby is behind", () => {
          expect(run.createdBehind).toBeGreaterThan(0);
        });

        it("loses pets answered 201, at most those since the sender began to be stopped and the workers' in flight", () => {
          expect(lost.length).toBeGreaterThan(0);
          expect(lost.length).toBeLessThanOrEqual(run.sinceStopping + 12);
        });
      }
    });

    it("stops all three with exit 0 on SIGTERM", async () => {
      const exits = await Promise.all(servers.map((server) => stopProcess(server.child, "SIGTERM")));
      expect(exits).toEqual(servers.map(() => ({ code: 0, signal: null })));
    }, 30_000);
  });
}
