import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { libsqlAdapters, migrateLibsql } from "@petstore/adapters/libsql";
import { connectLibsql } from "@petstore/adapters/libsql/connect";
import { DEFAULT_BAN, issueApiKey } from "@petstore/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { steppedWallClock } from "../_support/libfaketime.js";

const PROCESSES = 4;
/** The key's per-minute limit; 3x as many creates are fired in total. */
const LIMIT = 40;
const PER_PROCESS = (3 * LIMIT) / PROCESSES;
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WORKER = fileURLToPath(new URL("./_create-pets.ts", import.meta.url));

interface Outcome {
  pid: number;
  responses: { status: number; id?: number; code?: string }[];
}

/** Runs one worker; resolves with its result line, rejects on a non-zero exit. */
function startWorker(
  env: Record<string, string>,
  onReady: () => void,
): { child: ChildProcess; result: Promise<Outcome> } {
  const child = spawn(process.execPath, ["--conditions=@petstore/source", "--import", "tsx", WORKER], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    const before = stdout;
    stdout += chunk.toString();
    if (!before.includes("ready\n") && stdout.includes("ready\n")) onReady();
  });
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const result = new Promise<Outcome>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      const line = stdout.split("\n").find((l) => l.startsWith("{"));
      if (code === 0 && line) resolve(JSON.parse(line) as Outcome);
      else reject(new Error(`worker ${child.pid} exited with ${code ?? signal}: ${stderr.slice(-2_000)}`));
    });
  });
  return { child, result };
}

describe.each([
  { clients: "connectLibsql", env: {} },
  // As a remote URL gets it: a plain client, no local fast path.
  { clients: "plain @libsql/client", env: { PLAIN_CLIENT: "1" } },
])(
  `with $clients clients, ${PROCESSES} processes sharing one database file fire ${3 * LIMIT} creates at once`,
  ({ env: clientEnv }) => {
    // One run of the workers; each it reads its answers or the file it left.
    let dir: string;
    let db: Awaited<ReturnType<typeof connectLibsql>> | undefined;
    const children: ChildProcess[] = [];
    let wallClock: ReturnType<typeof steppedWallClock> | undefined;
    let responses: Outcome["responses"];
    const withStatus = (status: number) => responses.filter((r) => r.status === status);

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "petstore-multiprocess-"));
      const url = `file:${join(dir, "petstore.db")}`;
      const startFile = join(dir, "start");
      wallClock = steppedWallClock();
      const timer = setTimeout(() => {
        for (const child of children) child.kill("SIGKILL");
      }, 50_000);
      try {
        db = await connectLibsql({ url });
        await migrateLibsql(db);
        const { key } = await issueApiKey(libsqlAdapters(db).keys, { plan: "free", perMinute: LIMIT });

        let ready = 0;
        let allReady!: () => void;
        const readyPromise = new Promise<void>((resolve) => (allReady = resolve));
        const env = {
          ...clientEnv,
          DB_URL: url,
          API_KEY: key,
          REQUESTS: String(PER_PROCESS),
          START_FILE: startFile,
          ...wallClock.env,
        };
        const workers = Array.from({ length: PROCESSES }, () =>
          startWorker(env, () => {
            if (++ready === PROCESSES) allReady();
          }),
        );
        children.push(...workers.map((w) => w.child));
        // A worker that dies before "ready" fails the run here instead of leaving it waiting.
        await Promise.race([readyPromise, Promise.all(workers.map((w) => w.result))]);
        // The run starts 15 s into the next minute by every process's wall clock (after the key's
        // creation): its creates all fall in one minute's window. The wall clock, not an instant injected into the petstore, so that
        // each decision is made at the database's clock as read when it runs: an instant taken
        // when a request arrives is stale by the time a process blocked on the file's lock runs
        // its hit, and one more than a second behind a decision already stored reads as the
        // clock stepping back (the bucket starts over).
        wallClock.stepTo(Math.round((Math.ceil(Date.now() / 60_000) * 60_000 + 15_000 - Date.now()) / 1000));
        await writeFile(startFile, "go");
        const outcomes = await Promise.all(workers.map((w) => w.result));
        responses = outcomes.flatMap((outcome) => outcome.responses);
        const refused = withStatus(429);
        console.log(
          `multi-process: ${PROCESSES} processes, admitted ${withStatus(201).length}/${responses.length} (limit ${LIMIT}), ` +
            `refused ${refused.length} (${refused.filter((r) => r.code === "rate_limited").length} rate_limited, ${refused.filter((r) => r.code === "temporarily_banned").length} temporarily_banned), per process admitted ${outcomes.map((o) => o.responses.filter((r) => r.status === 201).length).join("/")}`,
        );
      } finally {
        clearTimeout(timer);
      }
    }, 60_000);
    afterAll(async () => {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      db?.close();
      await rm(dir, { recursive: true, force: true });
      wallClock?.remove();
    });

    it("answers every create, none with a 5xx", () => {
      expect(responses).toHaveLength(3 * LIMIT);
      expect(responses.filter((r) => r.status >= 500)).toEqual([]);
    });

    it(`admits exactly the per-minute limit of ${LIMIT}, each a pet of its own`, () => {
      const admitted = withStatus(201);
      expect(admitted).toHaveLength(LIMIT);
      expect(new Set(admitted.map((r) => r.id)).size).toBe(LIMIT);
    });

    it("refuses the rest with 429, banning across processes from the refusal after the ban's threshold", () => {
      const refused = withStatus(429);
      expect(refused).toHaveLength(2 * LIMIT);
      // Refusals count toward the ban across processes too: the one after the threshold bans.
      expect(refused.filter((r) => r.code === "rate_limited")).toHaveLength(DEFAULT_BAN.threshold);
      expect(refused.filter((r) => r.code === "temporarily_banned")).toHaveLength(2 * LIMIT - DEFAULT_BAN.threshold);
    });

    it("stores exactly the admitted pets in the shared file", async () => {
      expect(Number((await db!.execute("SELECT count(*) AS n FROM pets"))[0]!.n)).toBe(LIMIT);
    });
  },
);
