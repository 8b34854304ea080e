/**
 * The packages as a user gets them: `npm run pack` builds and packs @petstore/core and
 * @petstore/adapters, one `npm install` puts both tarballs into a fresh project outside the
 * workspace (registry dependencies resolved normally, no export condition of ours), and
 * there the library serves real requests under Node, Bun and Deno and type-checks under
 * three module resolutions.
 */
import { type ChildProcess, execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../_support/free-port.js";
import {
  emptyDirectory,
  killWithDescendants,
  npmQuietly,
  pathWithoutBunOrDeno,
  readmeCommands,
  runLine,
  startLine,
  stopWithDescendants,
} from "./_readme-commands.js";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "../..");
const BIN = join(ROOT, "node_modules/.bin");
const TARBALLS = join(ROOT, "dist/packages");
const project = mkdtempSync(join(tmpdir(), "petstore-consumer-"));
const versionOf = (name: string): string =>
  JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")).version;

beforeAll(async () => {
  expect(relative(ROOT, project).startsWith("..")).toBe(true);
  await run("npm", ["run", "-s", "pack"], { cwd: ROOT, timeout: 120_000 });
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  for (const file of ["serve.mjs", "consumer.ts"])
    copyFileSync(join(import.meta.dirname, "consumer", file), join(project, file));
  // The bridge at the versions the workspace locks, so the npm cache answers without a download.
  const bridge = [`@hono/node-server@${versionOf("@hono/node-server")}`, `hono@${versionOf("hono")}`];
  const started = performance.now();
  await run(
    "npm",
    [
      "install",
      join(TARBALLS, "petstore-core-1.0.0.tgz"),
      join(TARBALLS, "petstore-adapters-1.0.0.tgz"),
      ...bridge,
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
    ],
    {
      cwd: project,
      timeout: 180_000,
    },
  );
  console.log(`packaging: npm install of both tarballs took ${((performance.now() - started) / 1000).toFixed(1)} s`);
}, 300_000);
afterAll(() => rmSync(project, { recursive: true, force: true }));

/** What the environment adds to npm's output whatever the package: the machine's own npmrc, and no login for a dry run. */
const environmental = /Unknown (user|env) config "nodedir"|requires you to be logged in/;

describe.each(["core", "adapters"])("the @petstore/%s tarball", (name) => {
  it("holds the build, a README and a LICENSE, and publishes without a warning", async () => {
    const { stdout, stderr } = await run(
      "npm",
      ["publish", "--dry-run", "--json", join(TARBALLS, `petstore-${name}-1.0.0.tgz`)],
      { cwd: project, timeout: 60_000 },
    );
    const files: string[] = JSON.parse(stdout)[`@petstore/${name}`].files.map((file: { path: string }) => file.path);
    expect(files.filter((path) => !/^dist\/[\w/-]+\.(js|d\.ts)$/.test(path)).sort()).toEqual([
      "LICENSE",
      "README.md",
      "package.json",
    ]);
    const entries = name === "core" ? ["index", "testing/index"] : ["memory/index", "libsql/index"];
    for (const entry of entries)
      expect(files).toEqual(expect.arrayContaining([`dist/${entry}.js`, `dist/${entry}.d.ts`]));
    expect(stderr.split("\n").filter((line) => /warn/i.test(line) && !environmental.test(line))).toEqual([]);
  });
});

describe.each([
  ["node", "node:http"],
  ["bun", "node:http"],
  ["bun", "native"],
  ["deno", "node:http"],
  ["deno", "native"],
])("under %s, on %s, in a project that installed the tarballs", (runtime, mount) => {
  it("serves authenticated requests with rate-limit headers, in memory and on a libSQL file", async () => {
    const command = runtime === "node" ? "node" : join(BIN, runtime);
    const permissions = [
      "--allow-net=127.0.0.1",
      "--allow-env",
      "--allow-sys",
      "--allow-ffi",
      "--allow-read=.",
      "--allow-write=.",
    ];
    const args = [...(runtime === "deno" ? ["run", ...permissions] : []), "serve.mjs", mount];
    // The reset lies after the requests were made and within a minute of when they ended: the
    // clock is read on both sides, since the minute may turn while the process runs.
    const before = Date.now() / 1000;
    const { stdout } = await run(command, args, { cwd: project, timeout: 60_000 });
    const after = Date.now() / 1000;
    const result = JSON.parse(stdout.trim().split("\n").at(-1)!);
    expect([result.runtime, result.mount]).toEqual([runtime, mount]);
    for (const adapter of ["memory", "libsql"]) {
      const [anonymous, created, listed] = result[adapter];
      expect(anonymous).toMatchObject({
        status: 401,
        body: { code: "unauthorized", status: 401 },
        limit: "60",
        remaining: "59",
      });
      expect(created).toMatchObject({
        status: 201,
        body: { id: 1, name: "Rex", categoryId: 1 },
        limit: "60",
        remaining: "59",
      });
      expect(listed).toMatchObject({
        status: 200,
        body: [{ id: 1, name: "Rex", categoryId: 1 }],
        limit: "60",
        remaining: "58",
      });
      expect(listed.reset).toBeGreaterThan(before);
      expect(listed.reset).toBeLessThanOrEqual(Math.ceil(after) + 60);
    }
  });
});

/**
 * The README's smallest mount (`server.mjs`, its block word for word) in the project that
 * installed the tarballs, run with each of the README's lines: Node, then Bun and Deno
 * installed by npm as it says, on a PATH without a global bun or deno. The port is the
 * reader's to pick (a free one here, for the README's 3000).
 */
describe("the README's smallest mount, run as it says", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const env = { ...process.env, ...npmQuietly, PATH: pathWithoutBunOrDeno(), NO_COLOR: "1" };
  const running: ChildProcess[] = [];
  afterAll(() => {
    for (const child of running) killWithDescendants(child);
  });

  it.each([
    ["node", "node server.mjs", undefined],
    ["bun", "npx bun server.mjs", "npm install -D bun"],
    ["deno", "npx deno run --allow-net=127.0.0.1:3000 server.mjs", "npm install -D deno"],
  ])(
    "under %s: %s",
    async (_runtime, line, install) => {
      const mount = /The smallest mount[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)![1]!;
      expect(readme).toContain(line);
      if (install !== undefined) expect(readme).toContain(`\`${install}\``);
      const port = String(await freePort());
      writeFileSync(join(project, "server.mjs"), mount.replaceAll("3000", port));
      if (install !== undefined) await runLine(install, project, env);
      // The snippet prints its curl line once it listens.
      const { child, match } = await startLine(
        line.replace("3000", port),
        project,
        env,
        /curl -i -H "Authorization: Bearer (psk_\w+)" (http:\/\/\S+)/,
      );
      running.push(child);
      const answer = await fetch(match[2]!, { headers: { authorization: `Bearer ${match[1]}` } });
      expect([answer.status, answer.headers.get("x-ratelimit-remaining")]).toEqual([200, "59"]);
      killWithDescendants(child);
    },
    120_000,
  );
});

describe.each([
  ["bundler", "esnext"],
  ["node16", "node16"],
  ["node10", "es2022"],
])('with "moduleResolution": "%s"', (moduleResolution, module) => {
  it("type-checks a consumer of the public API", async () => {
    const compilerOptions = {
      strict: true,
      noEmit: true,
      target: "es2022",
      lib: ["es2023", "dom"],
      types: [],
      module,
      moduleResolution,
      exactOptionalPropertyTypes: true,
    };
    writeFileSync(
      join(project, `tsconfig.${moduleResolution}.json`),
      JSON.stringify({ compilerOptions, files: ["consumer.ts"] }),
    );
    const check = run(join(BIN, "tsc"), ["-p", `tsconfig.${moduleResolution}.json`], { cwd: project, timeout: 60_000 });
    await expect(
      check.catch((error: { stdout: string }) => Promise.reject(new Error(error.stdout))),
    ).resolves.toBeDefined();
  });
});

/**
 * Each example's README, followed word by word: its `sh` block run line by line in an empty
 * directory outside the repository, as a newcomer's shell with `PETSTORE_CHECKOUT` naming this
 * checkout, whose `npm run pack` wrote the tarballs: the README's own commands copy the example's
 * files and the tarballs in (so a file it does not name is missing, and the example fails), on a
 * PATH without `bun` or `deno` (the READMEs install them with npm). Only what a README leaves to
 * the reader is filled in: a free port (`PORT`, which alone moves a server), and for the clients
 * the address and key of a running Pet Store. A server's printed `curl` line is then tried.
 */
describe("each example, run as its README says", () => {
  const EXAMPLES = join(ROOT, "examples");
  const projects: string[] = [];
  const children: ChildProcess[] = [];
  // The projects' node_modules (wrangler's alone is about 200 MB) take a while to remove.
  afterAll(() => {
    for (const child of children) killWithDescendants(child);
    for (const dir of projects) rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  /** An empty directory for `example`, and the environment its README's commands run in. */
  function projectFor(example: string): { dir: string; env: NodeJS.ProcessEnv } {
    const project = emptyDirectory(`petstore-example-${example}-`, ROOT);
    projects.push(project.dir);
    expect(readdirSync(project.dir)).toEqual([]);
    return { dir: project.dir, env: { ...project.env, PORT: "0" } };
  }

  it("runs them where no bun or deno is on PATH", async () => {
    const { dir, env } = projectFor("bun-serve");
    await expect(runLine("command -v bun || command -v deno", dir, env)).rejects.toThrow(/failed \(1\)/);
    expect(await runLine("command -v node && command -v npm", dir, env)).toMatch(/node\n.*npm/);
  });

  /** Runs every line; the last one a server that prints a curl line, which must answer 200. */
  async function runServerExample(
    example: string,
    block = 0,
  ): Promise<{ url: string; key: string; dir: string; env: NodeJS.ProcessEnv }> {
    const { dir, env } = projectFor(example);
    const lines = readmeCommands(join(EXAMPLES, example, "README.md"), block);
    for (const line of lines.slice(0, -1)) await runLine(line, dir, env);
    // A port of its own (Deno's --allow-net names the host only, so PORT alone moves the server).
    const { child, match } = await startLine(
      lines.at(-1)!,
      dir,
      { ...env, PORT: String(await freePort()) },
      /curl -H "Authorization: Bearer (psk_\w+)" (http:\/\/\S+)/,
    );
    children.push(child);
    const [, key, url] = match;
    const answer = await fetch(url!, { headers: { authorization: `Bearer ${key}` } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("x-ratelimit-limit")).toBe("60");
    return { url: url!.replace(/\/pets$/, ""), key: key!, dir, env };
  }

  it.concurrent.each(["node-http", "express", "hono-node", "bun-serve", "hono-mount", "itty-mount", "deno-serve"])(
    "%s serves the curl line it prints",
    async (example) => {
      await runServerExample(example);
    },
    240_000,
  );

  it.concurrent("worker-module runs local.ts, then the wrangler dev loop with the key issue-key.ts printed, as its README says", async () => {
    const readme = join(EXAMPLES, "worker-module", "README.md");
    // The third sh block, "libSQL instead of D1": local.ts under Bun.
    const { dir, env } = await runServerExample("worker-module", 2);
    // The first block deploys to a Cloudflare account: only its copies and installs run here.
    for (const line of readmeCommands(readme).filter((command) => /^(cp|npm install) /.test(command)))
      await runLine(line, dir, env);
    const [dev, firstCurl, issueKey, execute, secondCurl, ...rest] = readmeCommands(readme, 1);
    expect([issueKey, execute, rest]).toEqual([
      "npx bun issue-key.ts free",
      'npx wrangler d1 execute petstore --local --command "INSERT INTO accounts ...; INSERT INTO api_keys ..."',
      [],
    ]);
    // wrangler's launcher refuses Node before 22, and this runs on Node 20: the same CLI, without the launcher.
    const wrangler = (line: string) =>
      line.replace(/^npx wrangler /, "node node_modules/wrangler/wrangler-dist/cli.js ");
    const wranglerEnv = {
      ...env,
      WRANGLER_SEND_METRICS: "false",
      WRANGLER_LOG_PATH: join(dir, "wrangler-logs"),
      XDG_CONFIG_HOME: join(dir, ".config"),
    };
    const port = await freePort();
    const { child } = await startLine(
      `${wrangler(dev!)} --ip 127.0.0.1 --port ${port}`,
      dir,
      wranglerEnv,
      /Ready on http:\/\/127\.0\.0\.1:\d+/,
    );
    try {
      const here = (line: string) => line.replaceAll("http://localhost:8787", `http://127.0.0.1:${port}`);
      // curl's answer body, one line of JSON, without the progress meter it writes beside it.
      const body = (output: string) => JSON.parse(/(\{"[^\r\n]*\}|\[[^\r\n]*\])/.exec(output)![1]!);
      expect(body(await runLine(here(firstCurl!), dir, env))).toMatchObject({ code: "unauthorized", status: 401 });
      const printed = await runLine(issueKey!, dir, env);
      const key = /psk_\w{38}/.exec(printed)![0];
      const local = printed
        .split("\n")
        .find((line) => line.startsWith("npx wrangler d1 execute petstore --local --command "))!;
      expect(printed.split("\n")).toContain(local.replace("--local", "--remote"));
      await runLine(wrangler(local), dir, wranglerEnv);
      expect(body(await runLine(here(secondCurl!).replace("psk_...", key), dir, env))).toEqual([]);
    } finally {
      await stopWithDescendants(child);
    }
  }, 240_000);

  it.concurrent("testing-with-memory passes its tests", async () => {
    const { dir, env } = projectFor("testing-with-memory");
    let output = "";
    for (const line of readmeCommands(join(EXAMPLES, "testing-with-memory", "README.md")))
      output = await runLine(line, dir, env);
    expect(output).toMatch(/Tests\s+\d+ passed/);
  }, 240_000);

  it.concurrent("the clients, typed-client and retrying-client, work against a running Pet Store", async () => {
    const { url, key } = await runServerExample("node-http");
    for (const example of ["typed-client", "retrying-client"]) {
      const { dir, env } = projectFor(example);
      let output = "";
      for (const line of readmeCommands(join(EXAMPLES, example, "README.md"))) {
        // The README's example server address and key placeholder, made this server's.
        output = await runLine(line.replaceAll("http://127.0.0.1:3000/v1", url).replaceAll("psk_...", key), dir, {
          ...env,
          COUNT: "5",
        });
      }
      expect(output).toMatch(
        example === "typed-client" ? /Created pet \d+ at \/v1\/pets\/\d+/ : /added Pet 5 as id \d+/,
      );
    }
  }, 240_000);
});

/**
 * `@petstore/core/testing` beside the test runner a project already has: its optional peer
 * dependency on vitest once made npm crash in a vitest 3 project ("Cannot read properties of
 * null"). Installed with vitest 3, vitest 4 and none; where there is a runner (and fast-check,
 * the suites' other optional peer), the memory adapters pass the four contract suites.
 */
describe.concurrent.each([["vitest@3"], ["vitest@4"], [undefined]])(
  "an install of the tarballs beside %s",
  (runner) => {
    // One project per runner: the runner installed first, as it was before our packages came, then the tarballs.
    let dir: string;
    let installed: { stderr: string };
    const env = { ...process.env, ...npmQuietly };

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "petstore-runner-"));
      writeFileSync(
        join(dir, "package.json"),
        JSON.stringify({ name: "runner-project", private: true, type: "module" }),
      );
      if (runner !== undefined)
        await run("npm", ["install", "-D", runner, `fast-check@${versionOf("fast-check")}`], {
          cwd: dir,
          env,
          timeout: 180_000,
        });
      installed = await run(
        "npm",
        ["install", join(TARBALLS, "petstore-core-1.0.0.tgz"), join(TARBALLS, "petstore-adapters-1.0.0.tgz")],
        { cwd: dir, env, timeout: 180_000 },
      );
    }, 300_000);
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("succeeds without a deprecation warning", () => {
      // Nothing our packages bring is deprecated (itty-router 6.0.0 was).
      expect(installed.stderr.split("\n").filter((line) => /deprecated/i.test(line))).toEqual([]);
    });

    it("imports @petstore/core", async () => {
      const { stdout } = await run(
        "node",
        [
          "--input-type=module",
          "-e",
          'import("@petstore/core").then((core) => console.log(typeof core.createPetstore))',
        ],
        { cwd: dir },
      );
      expect(stdout.trim()).toBe("function");
    });

    it("gives each package's version through its package.json export", async () => {
      // Tools read a package's version through its package.json export.
      const versions = await run(
        "node",
        [
          "-e",
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the script's own template, run by node -e
          'console.log(["core", "adapters"].map((name) => require(`@petstore/${name}/package.json`).version).join(" "))',
        ],
        { cwd: dir },
      );
      expect(versions.stdout.trim()).toBe("1.0.0 1.0.0");
    });

    it.skipIf(runner === undefined)(
      "keeps the project's vitest, on which the contract suites pass",
      async () => {
        writeFileSync(
          join(dir, "memory.contract.test.js"),
          [
            'import { apiKeysContract, idempotencyContract, petStoreContract, rateLimiterContract } from "@petstore/core/testing";',
            'import { memoryAdapters, memoryKeys, memoryLimiter } from "@petstore/adapters/memory";',
            "const store = async (clock) => { const { store, idempotency } = memoryAdapters({ clock }); return { store, idempotency }; };",
            'petStoreContract("memory", store);',
            'idempotencyContract("memory", store);',
            'rateLimiterContract("memory", async (clock) => ({ limiter: memoryLimiter({ clock }) }));',
            'apiKeysContract("memory", async (clock) => ({ keys: memoryKeys({ clock }) }));',
          ].join("\n"),
        );
        const tests = await run(join(dir, "node_modules/.bin/vitest"), ["run"], {
          cwd: dir,
          env: { ...env, NO_COLOR: "1" },
          timeout: 120_000,
        });
        expect(tests.stdout).toMatch(/Tests\s+\d+ passed/);
        expect(tests.stdout).not.toMatch(/failed/);
        const version = JSON.parse(readFileSync(join(dir, "node_modules/vitest/package.json"), "utf8"))
          .version as string;
        expect(version.split(".")[0]).toBe(runner!.split("@")[1]);
      },
      180_000,
    );
  },
);
