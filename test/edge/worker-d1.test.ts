import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import type { IssueApiKeyInput } from "@petstore/core";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyInsert } from "../../examples/worker-module/key-insert.js";
import { COMPATIBILITY_DATE } from "../_support/workerd.js";
import { bundleWorker } from "./_bundle.js";

const ROOT = resolve(import.meta.dirname, "../..");

/** The workerd processes this process started (miniflare's), from /proc: miniflare does not tell. */
function workerdPids(): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        // "pid (comm) state ppid ...": comm may hold spaces, so read after its closing parenthesis.
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return (
          stat.includes("(workerd)") && Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === process.pid
        );
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}
const MINUTE = 60_000;
const DAY = 86_400_000;

/**
 * The worker-module example as deployed: bundled, in workerd (miniflare) with the bindings of
 * its wrangler.toml, a D1 database as `DB` and `PetstoreRateLimiter` objects as `LIMITER`,
 * persisted in a temporary directory, asked over HTTP. Real time: the worker reads the clock.
 */
describe("the worker-module example on D1 and Durable Objects in workerd", () => {
  const dir = mkdtempSync(join(tmpdir(), "petstore-worker-d1-"));
  let code: string;
  let workerd: Miniflare;

  /** workerd with the example's bindings, on the persistence directory of this suite. */
  function start(): Miniflare {
    return new Miniflare({
      // No discovery of, or by, other miniflare processes on this machine (other suites' too).
      enableDevRegistry: false,
      host: "127.0.0.1",
      port: 0,
      resourcePersistencePath: join(dir, "state"),
      workers: [
        {
          config: {
            name: "petstore",
            compatibilityDate: COMPATIBILITY_DATE,
            manifest: { mainModule: "worker.mjs", modules: { "worker.mjs": { type: "esm", contents: code } } },
            env: {
              DB: { type: "d1", id: "petstore" },
              LIMITER: { type: "durable-object", worker: "petstore", exportName: "PetstoreRateLimiter" },
            },
            exports: { PetstoreRateLimiter: { type: "durable-object", storage: "sqlite" } },
          },
        },
      ],
    });
  }

  beforeAll(async () => {
    code = (await bundleWorker()).code;
    workerd = start();
  }, 60_000);
  afterAll(async () => {
    await workerd?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A request over HTTP to the runtime's loopback socket, as a client's would arrive (not
   * through miniflare's dispatchFetch, whose answers' bodies now and then could not be read).
   */
  const call = async (path: string, key?: string, init: RequestInit = {}) =>
    fetch(new URL(path, await workerd.ready), {
      ...init,
      headers: {
        ...(key === undefined ? {} : { Authorization: `Bearer ${key}` }),
        "CF-Connecting-IP": "203.0.113.9",
        ...init.headers,
      },
    });

  /** A key stored as the README says: the INSERT of `key-insert.ts`, run on the D1 database. */
  async function storeKey(input: IssueApiKeyInput): Promise<string> {
    const { key, sql } = await keyInsert(input);
    const db = await workerd.getD1Database("DB");
    await db.prepare(sql).run();
    return key;
  }

  /** Every pet, page after page. */
  async function everyPet(key: string): Promise<{ id: number; categoryId: number }[]> {
    const pets: { id: number; categoryId: number }[] = [];
    for (let cursor = ""; ; ) {
      const page = await call(`/v1/pets?limit=100${cursor}`, key);
      expect(page.status).toBe(200);
      pets.push(...((await page.json()) as { id: number; categoryId: number }[]));
      const next = /cursor=([^>&]+)/.exec(page.headers.get("link") ?? "")?.[1];
      if (next === undefined) return pets;
      cursor = `&cursor=${next}`;
    }
  }

  let freeKey: string;
  let dayKey: string;
  let petId: number;
  /** The day's remaining requests of `dayKey` after its last request, and that request's UTC day. */
  let dayRemaining: { remaining: number; day: number };

  it("migrates D1 on its first request, then serves a key stored with the README's INSERT", async () => {
    expect((await call("/v1/pets")).status).toBe(401);
    const key = await storeKey({ plan: "free" });
    const created = await call("/v1/pets", key, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    petId = ((await created.json()) as { id: number }).id;
    const listed = await call("/v1/pets", key);
    expect(await listed.json()).toEqual([{ id: petId, name: "Rex", categoryId: 1 }]);
    expect(listed.headers.get("x-ratelimit-limit")).toBe("60");
    // An enterprise key whose day limit binds: its counter shows in the headers across a restart.
    dayKey = await storeKey({ plan: "enterprise", perMinute: 1000, perDay: 5 });
    for (const _ of [1, 2]) {
      const response = await call("/v1/pets", dayKey);
      expect(response.status).toBe(200);
      dayRemaining = {
        remaining: Number(response.headers.get("x-ratelimit-remaining")),
        day: Math.floor(Date.now() / DAY),
      };
    }
    expect(dayRemaining.remaining).toBe(3);
  });

  it("admits exactly 60 of 120 concurrent requests of one Free key, then bans the key after 30 refusals", async () => {
    // The burst must fall in one minute window: one that straddled a minute is run again with a new key.
    for (let attempt = 1; ; attempt++) {
      freeKey = await storeKey({ plan: "free" });
      const before = Date.now();
      const responses = await Promise.all(Array.from({ length: 120 }, () => call("/v1/pets", freeKey)));
      const codes = await Promise.all(
        responses.map(async (r) => {
          if (r.status !== 200) return ((await r.json()) as { code: string }).code;
          await r.body?.cancel(); // the list itself does not matter here; its socket does
          return "ok";
        }),
      );
      if (Math.floor(before / MINUTE) !== Math.floor(Date.now() / MINUTE) && attempt < 3) continue;
      const count = (code: string) => codes.filter((c) => c === code).length;
      expect({ admitted: count("ok"), limited: count("rate_limited"), banned: count("temporarily_banned") }).toEqual({
        admitted: 60,
        limited: 30,
        banned: 30,
      });
      expect(responses.filter((r) => r.status === 429)).toHaveLength(60);
      break;
    }
    const after = await call("/v1/pets", freeKey);
    expect(after.status).toBe(429);
    expect(((await after.json()) as { code: string }).code).toBe("temporarily_banned");
  });

  it("keeps pets, keys, counters and bans across a restart of the runtime on the same directory", async () => {
    await workerd.dispose();
    workerd = start();
    const otherKey = await storeKey({ plan: "free" });
    expect(await (await call(`/v1/pets?limit=1`, otherKey)).json()).toEqual([
      { id: petId, name: "Rex", categoryId: 1 },
    ]);
    const banned = await call("/v1/pets", freeKey);
    expect(banned.status).toBe(429);
    expect(((await banned.json()) as { code: string }).code).toBe("temporarily_banned");
    const counted = await call("/v1/pets", dayKey);
    expect(counted.status).toBe(200);
    // Unless UTC midnight passed since, the day window counted on from before the restart.
    if (Math.floor(Date.now() / DAY) === dayRemaining.day)
      expect(counted.headers.get("x-ratelimit-remaining")).toBe(String(dayRemaining.remaining - 1));
  });

  it.runIf(process.platform === "linux")(
    "keeps every pet it answered 201 for when the runtime is killed in the middle of creating",
    async () => {
      const key = await storeKey({ plan: "business" });
      const create = (i: number) =>
        call("/v1/pets", key, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ name: `Kill ${i}`, categoryId: 1 }),
        });
      const acknowledged: number[] = [];
      const [pid] = workerdPids();
      expect(pid).toBeDefined();
      let killed = false;
      // Creates keep going until the runtime dies under them, SIGKILLed once ten were answered.
      const creators = Array.from({ length: 8 }, async (_, creator) => {
        for (let i = 0; !killed; i++) {
          try {
            const response = await create(creator * 1_000 + i);
            if (response.status !== 201) throw new Error(`create answered ${response.status}`);
            acknowledged.push(((await response.json()) as { id: number }).id);
          } catch (error) {
            if (!killed) throw error;
          }
          if (acknowledged.length >= 10 && !killed) {
            killed = true;
            process.kill(pid!, "SIGKILL");
          }
        }
      });
      await Promise.all(creators);
      await workerd.dispose().catch(() => {});
      workerd = start();
      const listed = (await everyPet(key)).map((pet) => pet.id);
      expect(acknowledged.length).toBeGreaterThanOrEqual(10);
      expect(acknowledged.filter((id) => !listed.includes(id))).toEqual([]);
      expect(new Set(listed).size).toBe(listed.length);
    },
    60_000,
  );

  it.runIf(process.platform === "linux")(
    "answers every create 201 and keeps each once when the runtime is stopped (SIGSTOP) in the middle and goes on",
    async () => {
      const key = await storeKey({ plan: "business" });
      const [pid] = workerdPids();
      expect(pid).toBeDefined();
      const acknowledged: number[] = [];
      let stopped: Promise<void> | undefined;
      const creators = Array.from({ length: 8 }, async (_, creator) => {
        for (let i = 0; i < 10; i++) {
          const response = await call("/v1/pets", key, {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ name: `Pause ${creator}-${i}`, categoryId: 2 }),
          });
          expect(response.status).toBe(201);
          acknowledged.push(((await response.json()) as { id: number }).id);
          if (acknowledged.length === 10) {
            process.kill(pid!, "SIGSTOP");
            // The pause is the fault: the creates in flight wait it out.
            stopped = new Promise((resume) =>
              setTimeout(() => {
                process.kill(pid!, "SIGCONT");
                resume();
              }, 1_000),
            );
          }
        }
      });
      await Promise.all(creators);
      await stopped;
      const paused = (await everyPet(key)).filter((pet) => pet.categoryId === 2).map((pet) => pet.id);
      expect(acknowledged).toHaveLength(80);
      expect([...paused].sort((a, b) => a - b)).toEqual([...acknowledged].sort((a, b) => a - b));
    },
    60_000,
  );

  it("passes wrangler deploy --dry-run with the example's wrangler.toml", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      // wrangler's own launcher refuses Node.js before 22; its CLI runs on 20 for a dry run.
      [
        join(ROOT, "node_modules/wrangler/wrangler-dist/cli.js"),
        "deploy",
        "--dry-run",
        "--config",
        "examples/worker-module/wrangler.toml",
        "--outdir",
        join(dir, "dry-run"),
      ],
      {
        cwd: ROOT,
        timeout: 60_000,
        env: {
          ...process.env,
          // The repository's packages from their sources (a user's project has them built); no
          // update check, no metrics, logs in the temporary directory: nothing leaves the machine.
          WRANGLER_BUILD_CONDITIONS: "@petstore/source,workerd,worker,browser",
          WRANGLER_HIDE_BANNER: "true",
          WRANGLER_SEND_METRICS: "false",
          WRANGLER_LOG_PATH: join(dir, "wrangler-logs"),
        },
      },
    );
    expect(stdout).toMatch(/env\.LIMITER \(PetstoreRateLimiter\)\s+Durable Object/);
    expect(stdout).toMatch(/env\.DB \(petstore\)\s+D1 Database/);
    expect(stdout).toContain("--dry-run: exiting now.");
  }, 60_000);
});
