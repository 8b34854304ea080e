import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, freePort, printedKey, type RunningExample, startExample } from "../_support/start-example.js";

/** The README's command (its port from PORT alone), plus what running from this repository's sources needs. */
const DENO_ARGS = [
  "run",
  "--sloppy-imports",
  "--node-modules-dir=manual",
  "--conditions=@petstore/source",
  "--allow-env=PORT,PETSTORE_DB,LIBSQL_JS_DEV",
  "--allow-sys=cpus,networkInterfaces,hostname",
  "--allow-ffi=node_modules/@libsql/linux-x64-gnu/index.node",
  "--allow-net=127.0.0.1",
  "examples/deno-serve/server.ts",
];

describe("the deno-serve example", () => {
  const dir = mkdtempSync(join(tmpdir(), "petstore-deno-serve-"));
  const db = `file:${join(dir, "petstore.db")}`;
  let example: RunningExample | undefined;

  async function start() {
    const port = await freePort();
    example = await startExample(`${BIN}/deno`, DENO_ARGS, {
      ready: /curl .*\n/,
      env: { PORT: String(port), PETSTORE_DB: db, NO_COLOR: "1" },
      timeoutMs: 30_000,
    });
    const key = printedKey(example);
    return { base: `http://127.0.0.1:${port}/v1`, auth: { Authorization: `Bearer ${key}` } };
  }

  let first: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    first = await start();
  }, 40_000);
  afterAll(async () => {
    await example?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves authenticated requests from the libSQL file", async () => {
    const created = await fetch(`${first.base}/pets`, {
      method: "POST",
      headers: { ...first.auth, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Dino", categoryId: 2 }),
    });
    expect(created.status).toBe(201);
    const anonymous = await fetch(`${first.base}/pets`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("x-ratelimit-remaining")).toBe("59");
  });

  it("type-checks under Deno (the root tsc has no Deno types and skips this file)", async () => {
    const args = [
      "check",
      "--no-config",
      "--sloppy-imports",
      "--node-modules-dir=manual",
      "--conditions=@petstore/source",
    ];
    const check = (file: string) =>
      promisify(execFile)(`${BIN}/deno`, [...args, file], {
        timeout: 30_000,
        env: { ...process.env, NO_COLOR: "1" },
      }).then(
        ({ stderr }) => ({ passed: true, stderr }),
        (error: { stderr: string }) => ({ passed: false, stderr: error.stderr }),
      );
    const example = await check("examples/deno-serve/server.ts");
    expect(example.stderr).toMatch(/^Check .*examples\/deno-serve\/server\.ts$/m);
    expect(example).toMatchObject({ passed: true });
    // The same check refuses a program with a type error: it does check, not merely run.
    const broken = join(dir, "broken.ts");
    writeFileSync(broken, 'const port: number = "8080";\nDeno.serve({ port }, () => new Response());\n');
    expect(await check(broken)).toMatchObject({ passed: false, stderr: expect.stringContaining("TS2322") });
  }, 60_000);

  it("still has the pets and the keys after a restart", async () => {
    await example!.stop();
    const second = await start();
    for (const auth of [first.auth, second.auth]) {
      const listed = await fetch(`${second.base}/pets`, { headers: auth });
      expect(await listed.json()).toEqual([{ id: 1, name: "Dino", categoryId: 2 }]);
    }
  }, 40_000);
});
