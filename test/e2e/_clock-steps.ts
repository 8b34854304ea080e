import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SteppedWallClock } from "../_support/libfaketime.js";
import { ensureBinary } from "./_binary.js";
import { client } from "./_http.js";
import { binaryServe, cleanUp, cli, createKey, type Server, startServer, stopProcess, waitFor } from "./_processes.js";

/** A store whose clock a test steps, and how to start the binary on it. */
export interface SteppedStore {
  /** The database's URL. */
  db: string;
  /** The store's wall clock (a file's is the server's own). */
  clock: SteppedWallClock;
  /** The binary's environment: libfaketime's too when the store's clock is the server's. */
  serverEnv: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

const MINUTE_S = 60;
const HOUR_S = 3_600;
const FREE = ["--plan", "free"];

/** The JSON lines of a server's stderr whose event is `event`. */
const events = (server: Server, event: string) =>
  server.stderr
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.event === event);

const until = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - performance.now())));

/**
 * What a server promises, on the binary, while the store's clock steps as NTP steps it
 * (libfaketime, the wall clock only): a revoke reaches the server within 5 s, a client under
 * its limits is never refused, no ban outlasts its length, and every step is logged once and
 * counted. One server for the suite; each `it` steps the clock from where the last left it.
 */
export function clockStepSuite(name: string, open: () => Promise<SteppedStore>): void {
  describe(`the binary on ${name} whose clock steps`, () => {
    let store: SteppedStore;
    let server: Server;
    let metricsUrl: string;
    /** Every step made, seconds: each must be logged once and counted. */
    const made: number[] = [];

    beforeAll(async () => {
      ensureBinary();
      store = await open();
      server = await startServer([...binaryServe(store.db), "--metrics-listen", "127.0.0.1:0"], {
        env: store.serverEnv,
      });
      const listening = server.stdout
        .map((line) => JSON.parse(line) as { event?: string; url?: string })
        .find((line) => line.event === "metrics listening");
      metricsUrl = listening!.url!;
    }, 120_000);

    afterAll(async () => {
      if (server) await stopProcess(server.child, "SIGTERM");
      await store?.close();
      await cleanUp();
    });

    /**
     * Steps the store's clock to `offset` seconds from the real one; resolves once the server
     * logged the step, which it sees at its next request (one without a key, each 200 ms,
     * makes sure there is one). Steps of 1 s or less are not steps.
     */
    function stepTo(offset: number): Promise<void> {
      const step = offset - store.clock.offset;
      if (step === 0) return Promise.resolve();
      if (Math.abs(step) < 2) throw new Error(`a step of ${step} s is within a reading's noise`);
      const logged = events(server, "clock step").length;
      made.push(step);
      store.clock.stepTo(offset);
      const seen = async () => {
        await (await fetch(new URL("/v1/openapi.json", server.url))).body?.cancel();
        return events(server, "clock step").length > logged;
      };
      return waitFor(seen, 20_000, { every: 200 }).then(() => {});
    }

    /**
     * Steps the clock to a base offset at which the store's clock turns a whole minute about
     * `leadMs` from now: when, by `performance.now()`. Offsets of whole minutes from it keep
     * that alignment.
     */
    async function alignMinute(leadMs: number): Promise<number> {
      let base = (MINUTE_S - Math.floor(((Date.now() + leadMs) / 1000) % MINUTE_S)) % MINUTE_S;
      // A step of under 2 s would be no step to log: one a minute longer turns the minute alike.
      if (base !== store.clock.offset && Math.abs(base - store.clock.offset) < 2) base += MINUTE_S;
      await stepTo(base);
      const storeNow = Date.now() + base * 1000;
      const turn = Math.ceil(storeNow / 60_000) * 60_000;
      return performance.now() + (turn - storeNow);
    }

    it("refuses a key revoked after a -1 h correction within 5 s", async () => {
      const { id, key } = await createKey(store.db, FREE);
      const api = client(server.url, key);
      const back = store.clock.offset;
      await stepTo(back + HOUR_S);
      // Verified (and cached) while the clock is an hour ahead; then the clock is corrected and the key revoked.
      expect((await api("/v1/pets?limit=1")).status).toBe(200);
      const corrected = stepTo(back);
      expect((await cli(["keys", "revoke", id, "--db", store.db])).code).toBe(0);
      const revokedAt = performance.now();
      await expect
        .poll(async () => (await api("/v1/pets?limit=1")).status, { timeout: 30_000, interval: 100 })
        .toBe(401);
      const refusedAfter = performance.now() - revokedAt;
      console.info(`${name}: a key revoked after a -1 h correction was refused ${Math.round(refusedAfter)} ms later`);
      expect(refusedAfter).toBeLessThan(5_500);
      await corrected;
    }, 60_000);

    it("never refuses a client at 40 a minute across a -5 min and a -1 h step, nor points its Reset further than a minute ahead", async () => {
      const { key } = await createKey(store.db, FREE);
      const api = client(server.url, key);
      const answers: { status: number; resetAhead: number | undefined }[] = [];
      for (const ahead of [5 * MINUTE_S, HOUR_S]) {
        // The window the clock is ahead in fills with 39 requests before the correction; 25 more follow it.
        const turn = await alignMinute(20_000);
        const base = store.clock.offset;
        await stepTo(base + ahead);
        const corrected = (async () => {
          await until(turn + 58_000);
          await stepTo(base);
        })();
        for (let k = 0; k < 64; k++) {
          await until(turn + 300 + 1_500 * k);
          const offset = store.clock.offset;
          const response = await api("/v1/pets?limit=1");
          await response.body?.cancel();
          const reset = Number(response.headers.get("x-ratelimit-reset"));
          // Only where the clock did not step during the request can its Reset be read against it.
          const steady = store.clock.offset === offset;
          answers.push({
            status: response.status,
            resetAhead: steady ? reset - (Date.now() / 1000 + offset) : undefined,
          });
        }
        await corrected;
      }
      const refused = answers.filter((answer) => answer.status !== 200);
      const furthest = Math.max(...answers.flatMap((answer) => answer.resetAhead ?? []));
      console.info(
        `${name}: a client at 40 a minute across a -5 min and a -1 h step: ${answers.length - refused.length} of ${answers.length} answered 200; X-RateLimit-Reset at most ${furthest.toFixed(1)} s ahead`,
      );
      expect(refused).toEqual([]);
      expect(furthest).toBeLessThanOrEqual(MINUTE_S + 1);
    }, 400_000);

    /** Requests until the key is banned (a Free key: 60 admitted, 31 refused, the last banning it): their Retry-After, seconds. */
    async function banned(api: ReturnType<typeof client>): Promise<number[]> {
      const waits: number[] = [];
      for (let i = 0; i < 120; i++) {
        const response = await api("/v1/pets?limit=1");
        const { code } = (await response.json()) as { code?: string };
        if (response.status === 429) waits.push(Number(response.headers.get("retry-after")));
        if (code === "temporarily_banned") return waits;
      }
      throw new Error("no ban after 120 requests");
    }

    it("lifts at the correction a ban set while the clock was an hour ahead: no Retry-After points past 600 s", async () => {
      const { key } = await createKey(store.db, FREE);
      const api = client(server.url, key);
      const back = store.clock.offset;
      await stepTo(back + HOUR_S);
      const waits = await banned(api);
      await stepTo(back);
      const after = await api("/v1/pets?limit=1");
      console.info(
        `${name}: a ban set an hour ahead: Retry-After at most ${Math.max(...waits)} s; after the -1 h correction the next request was answered ${after.status}`,
      );
      expect(Math.max(...waits)).toBeLessThanOrEqual(600);
      expect(after.status).toBe(200);
    }, 60_000);

    it("ends a ban set after a -1 h correction 600 s later by the store's clock, which runs in real time since", async () => {
      const { key } = await createKey(store.db, FREE);
      const api = client(server.url, key);
      const back = store.clock.offset;
      await stepTo(back + HOUR_S);
      expect((await api("/v1/pets?limit=1")).status).toBe(200);
      await stepTo(back);
      const waits = await banned(api);
      expect(waits.at(-1)).toBeGreaterThanOrEqual(599);
      expect(Math.max(...waits)).toBeLessThanOrEqual(600);
      // Ten minutes of the store's clock, without waiting them: 590 s on, still banned; 600 s on, over.
      await stepTo(back + 590);
      const during = await api("/v1/pets?limit=1");
      expect(((await during.json()) as { code?: string }).code).toBe("temporarily_banned");
      expect(Number(during.headers.get("retry-after"))).toBeLessThanOrEqual(11);
      await stepTo(back + 600);
      const over = await api("/v1/pets?limit=1");
      console.info(
        `${name}: a ban set after a -1 h correction: Retry-After ${waits.at(-1)} s; 590 s later ${during.status} (Retry-After ${during.headers.get("retry-after")}), 600 s later ${over.status}`,
      );
      expect(over.status).toBe(200);
    }, 90_000);

    it("logged every step of the store's clock once, with its size, and counted it", async () => {
      const lines = events(server, "clock step");
      const metrics = await (await fetch(metricsUrl)).text();
      const counted = /^petstore_clock_steps_total\{store="database"\} (\d+)$/m.exec(metrics)?.[1];
      console.info(
        `${name}: ${made.length} steps made (${made.join(", ")} s); logged: ${lines.map((line) => line.stepSeconds).join(", ")} s; petstore_clock_steps_total{store="database"} ${counted}`,
      );
      expect(lines.map((line) => line.store)).toEqual(made.map(() => "database"));
      for (const [i, line] of lines.entries()) expect(Math.abs(Number(line.stepSeconds) - made[i]!)).toBeLessThan(1);
      expect(Number(counted)).toBe(made.length);
    });
  });
}
