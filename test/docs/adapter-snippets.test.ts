/**
 * The server snippets of packages/adapters/README.md, run as written on the run's PostgreSQL
 * and a Redis of this suite's (Node through tsx, Bun, Deno, on the workspace sources): one
 * request without a key from 127.0.0.2 must be counted in that address's bucket. A snippet
 * that mounts `fetch` bare counts every such caller in `ip:unknown`, and the
 * library then warns on the console, which must stay silent here.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freePort } from "../_support/free-port.js";
import { postgresClient } from "../_support/postgres-database.js";
import { type RedisServer, startRedis } from "../_support/redis-server.js";
import { waitFor } from "../_support/wait-for.js";

const ROOT = join(import.meta.dirname, "../..");
const BIN = join(ROOT, "node_modules/.bin");
const README = join(ROOT, "packages/adapters/README.md");
// Inside the repository (dist/ is ignored), so the snippets' imports resolve to the workspace's packages.
mkdirSync(join(ROOT, "dist"), { recursive: true });
const dir = mkdtempSync(join(ROOT, "dist", "adapter-snippets-"));

/** Every js/ts block of the README that starts a server, with the runtime it is written for. */
function serverSnippets(): { index: number; runtime: "node" | "bun" | "deno"; code: string }[] {
  const blocks = [...readFileSync(README, "utf8").matchAll(/```(js|ts)\n([\s\S]*?)```/g)].map((match) => match[2]!);
  return blocks
    .map((code, index) => ({
      index,
      code,
      runtime: code.includes("Deno.")
        ? ("deno" as const)
        : code.includes("Bun.")
          ? ("bun" as const)
          : ("node" as const),
    }))
    .filter(({ code }) => /\bserve\(/.test(code));
}

let redis: RedisServer;
let redisClient: Redis;
const serverUrl = inject("postgresUrl");
const admin = postgresClient(serverUrl, { max: 1 });
const databases: string[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  redis = await startRedis();
  redisClient = new Redis(redis.url, { lazyConnect: true });
}, 30_000);
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  redisClient.disconnect();
  await redis.stop();
  for (const name of databases) await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end({ timeout: 5 });
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the snippet, the README's port made a free one; its stderr as it comes. */
async function start(
  snippet: ReturnType<typeof serverSnippets>[number],
  env: NodeJS.ProcessEnv,
): Promise<{ port: number; stderr: () => string }> {
  const port = await freePort();
  const file = join(dir, `snippet-${snippet.index}.${snippet.runtime === "deno" ? "ts" : "mjs"}`);
  expect(snippet.code).toContain("port: 3000");
  writeFileSync(file, snippet.code.replaceAll("port: 3000", `port: ${port}`));
  const command = {
    node: ["node", "--conditions=@petstore/source", "--import", "tsx", file],
    bun: [join(BIN, "bun"), "--conditions=@petstore/source", file],
    deno: [
      join(BIN, "deno"),
      "run",
      "--sloppy-imports",
      "--node-modules-dir=manual",
      "--conditions=@petstore/source",
      "-A",
      file,
    ],
  }[snippet.runtime];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: dir,
    env: { ...process.env, ...env, NO_COLOR: "1" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk));
  // The snippets print nothing when they listen: ready when a request is answered (at most 30 s).
  const exited = () =>
    new Error(`snippet ${snippet.index} (${snippet.runtime}) exited (${child.exitCode}):\n${stderr}`);
  const answers = async () => {
    if (child.exitCode !== null) throw exited();
    return (await anonymousRequest(port).catch(() => undefined)) !== undefined;
  };
  await waitFor(answers, 30_000, {
    every: 100,
    what: () => `snippet ${snippet.index} (${snippet.runtime}) to answer:\n${stderr}`,
  });
  // Answered by this snippet, not by another process that took the port meanwhile.
  if (child.exitCode !== null) throw exited();
  return { port, stderr: () => stderr };
}

/** One GET without a key, sent from 127.0.0.2 (another address than the readiness probe's), resolving with its status. */
function anonymousRequest(port: number, localAddress = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const sent = request({ host: "127.0.0.1", port, path: "/v1/pets", localAddress, timeout: 5_000 }, (response) => {
      response.resume();
      resolve(response.statusCode!);
    });
    sent.on("error", reject).on("timeout", () => sent.destroy(new Error("timed out")));
    sent.end();
  });
}

describe("the adapters README's server snippets", () => {
  const snippets = serverSnippets();

  it("are six: Node, Bun and Deno on Postgres, then with the limits in Redis", () => {
    expect(snippets.map((snippet) => [snippet.runtime, snippet.code.includes("redisLimiter")])).toEqual([
      ["node", false],
      ["bun", false],
      ["deno", false],
      ["node", true],
      ["bun", true],
      ["deno", true],
    ]);
  });

  it.each(snippets.map((snippet) => [snippet.index, snippet.runtime, snippet]))(
    "block %i (%s) counts a caller without a key by its own address, and listens on 127.0.0.1",
    async (index, _runtime, snippet) => {
      const database = `snippet_${process.pid}_${index}`;
      databases.push(database);
      await admin.unsafe(`CREATE DATABASE ${database}`);
      const url = serverUrl.replace(/\/[^/]*$/, `/${database}`);
      await redisClient.flushall();
      const { port, stderr } = await start(snippet, { DATABASE_URL: url, REDIS_URL: redis.url });

      expect(await anonymousRequest(port, "127.0.0.2")).toBe(401);
      const buckets = snippet.code.includes("redisLimiter")
        ? (await redisClient.keys("petstore:limit:*")).map((key) => /\{(.*)\}/.exec(key)![1])
        : await (async () => {
            const sql = postgresClient(url, { max: 1 });
            try {
              return (await sql.unsafe("SELECT bucket FROM rate_limits")).map((row) => row.bucket as string);
            } finally {
              await sql.end({ timeout: 5 });
            }
          })();
      // The readiness probe came from 127.0.0.1, the request under test from 127.0.0.2.
      expect(buckets.sort()).toEqual(["ip:127.0.0.1", "ip:127.0.0.2"]);
      expect(stderr()).not.toContain("@petstore/core:");
      // Not on every interface: nothing answers on another local address.
      await expect(
        new Promise((resolve, reject) =>
          request({ host: "127.0.0.3", port, path: "/v1/pets" }, resolve).on("error", reject).end(),
        ),
      ).rejects.toThrow(/ECONNREFUSED/);
    },
    60_000,
  );

  it("as they were, mounting fetch bare, count every caller without a key as one, and the library says so once on stderr", async () => {
    const database = `snippet_${process.pid}_bare`;
    databases.push(database);
    await admin.unsafe(`CREATE DATABASE ${database}`);
    const url = serverUrl.replace(/\/[^/]*$/, `/${database}`);
    const snippet = snippets[0]!;
    const bare = {
      ...snippet,
      index: 100,
      code: snippet.code.replace(
        /^serve\(.*$/m,
        'serve({ hostname: "127.0.0.1", port: 3000, fetch: petstore.fetch });',
      ),
    };
    expect(bare.code).not.toContain("clientAddress");
    const { port, stderr } = await start(bare, { DATABASE_URL: url });
    expect(await anonymousRequest(port, "127.0.0.2")).toBe(401);
    const sql = postgresClient(url, { max: 1 });
    try {
      expect((await sql.unsafe("SELECT bucket FROM rate_limits")).map((row) => row.bucket)).toEqual(["ip:unknown"]);
    } finally {
      await sql.end({ timeout: 5 });
    }
    const warnings = stderr()
      .split("\n")
      .filter((line) => line.startsWith("@petstore/core:"));
    expect(warnings).toEqual([
      expect.stringContaining(
        "came without a client address, so all such callers share one rate-limit bucket (ip:unknown)",
      ),
    ]);
  }, 60_000);
});
