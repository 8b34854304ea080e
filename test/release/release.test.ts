/**
 * The release: `release.ts` builds every platform's binary once for this run, SHA256SUMS
 * checks out, and what can run here runs: linux-x64 natively and linux-arm64 under
 * qemu-user (with Debian's arm64 cross libc). The musl binaries cannot run on this Debian:
 * Bun's musl runtime needs a musl-built libstdc++ and libgcc (Alpine's), which neither
 * Debian nor the npm registry provide; they are checked like darwin and windows: format,
 * architecture, interpreter and the embedded addon.
 */
import { execFile } from "node:child_process";
import {
  createReadStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanUp, cli, startServer, stopProcess } from "../e2e/_processes.js";
import { npmQuietly, pathWithoutBunOrDeno, readmeCommands, runLine } from "../packaging/_readme-commands.js";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "../..");
const out = mkdtempSync(join(tmpdir(), "petstore-release-"));
const db = mkdtempSync(join(tmpdir(), "petstore-release-db-"));

beforeAll(async () => {
  const started = performance.now();
  await run(join(ROOT, "node_modules/.bin/bun"), ["packages/server/release.ts", "--out", out], {
    cwd: ROOT,
    timeout: 540_000,
  });
  const sizes = readdirSync(out).map((file) => `${file} ${(statSync(join(out, file)).size / 2 ** 20).toFixed(1)} MiB`);
  console.log(`release: built in ${((performance.now() - started) / 1000).toFixed(1)} s\n${sizes.join("\n")}`);
}, 600_000);
afterAll(async () => {
  await cleanUp();
  rmSync(out, { recursive: true, force: true });
  rmSync(db, { recursive: true, force: true });
});

const BINARIES = [
  "darwin-arm64",
  "darwin-x64",
  "linux-arm64",
  "linux-arm64-musl",
  "linux-x64",
  "linux-x64-musl",
  "windows-x64.exe",
].map((name) => `petstore-${name}`);
const TARBALLS = ["petstore-core-1.0.0.tgz", "petstore-adapters-1.0.0.tgz"];

it("writes one folder: the seven binaries, both packages, INSTALL.md, and a SHA256SUMS of every file that sha256sum -c accepts", async () => {
  expect(readdirSync(out).sort()).toEqual([...BINARIES, ...TARBALLS, "INSTALL.md", "SHA256SUMS"].sort());
  const { stdout } = await run("sha256sum", ["-c", "SHA256SUMS"], { cwd: out, timeout: 60_000 });
  expect(stdout.trim().split("\n").sort()).toEqual([...BINARIES, ...TARBALLS].map((file) => `${file}: OK`).sort());
});

/**
 * INSTALL.md's lines for each package manager, run as written in a new project outside the
 * repository, with RELEASE the folder's path and then a URL serving the folder over HTTP; no
 * bun or deno on PATH but the manager's own. Then the runtime of that manager serves an
 * authenticated request in memory and opens a libSQL file through what was installed.
 */
describe("INSTALL.md, followed", () => {
  let server: Server;
  let url: string;
  const projects: string[] = [];
  beforeAll(async () => {
    // The folder as a web server would publish it: each file at its name.
    server = createServer((request, response) => {
      const file = join(out, decodeURIComponent(new URL(request.url!, "http://x").pathname).slice(1));
      if (!existsSync(file) || dirname(file) !== out) return void response.writeHead(404).end();
      response.writeHead(200, { "content-length": statSync(file).size });
      createReadStream(file).pipe(response);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    for (const dir of projects) rmSync(dir, { recursive: true, force: true });
  });

  const guide = () => join(out, "INSTALL.md");
  /** A new project, and the environment its lines run in: PATH without bun or deno, but `tools`. */
  function project(tools: string[], release: string): { dir: string; env: NodeJS.ProcessEnv } {
    const dir = mkdtempSync(join(tmpdir(), "petstore-release-user-"));
    projects.push(dir);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    mkdirSync(join(dir, ".tools"));
    for (const tool of tools) symlinkSync(join(ROOT, "node_modules/.bin", tool), join(dir, ".tools", tool));
    return {
      dir,
      env: {
        ...process.env,
        ...npmQuietly,
        NO_COLOR: "1",
        RELEASE: release,
        PATH: `${join(dir, ".tools")}:${pathWithoutBunOrDeno()}`,
      },
    };
  }

  const CHECK = [
    'import { memoryAdapters } from "@petstore/adapters/memory";',
    'import { libsqlAdapters, migrateLibsql } from "@petstore/adapters/libsql";',
    'import { connectLibsql } from "@petstore/adapters/libsql/connect";',
    'import { createPetstore, issueApiKey } from "@petstore/core";',
    "const adapters = memoryAdapters();",
    "const petstore = createPetstore(adapters);",
    'const { key } = await issueApiKey(adapters.keys, { plan: "free" });',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a line of the script the test writes
    'const answer = await petstore.fetch(new Request("http://app.test/v1/pets", { headers: { authorization: `Bearer ${key}` } }), { clientAddress: "192.0.2.1" });',
    'const db = await connectLibsql({ url: "file:check.db" });',
    "await migrateLibsql(db);",
    'const stored = await libsqlAdapters(db).store.createPet({ name: "Rex", categoryId: 1 });',
    "db.close();",
    'console.log(JSON.stringify({ status: answer.status, limit: answer.headers.get("x-ratelimit-limit"), libsql: stored.name }));',
  ].join("\n");

  describe.concurrent.each([
    ["npm", 1, [], ["node"]],
    ["pnpm", 2, ["pnpm"], ["node"]],
    ["bun", 3, ["bun"], ["bun"]],
    [
      "deno",
      4,
      ["deno"],
      ["deno", "run", "--allow-read=.", "--allow-write=.", "--allow-env", "--allow-sys", "--allow-ffi"],
    ],
  ] as const)("for %s", (manager, block, tools, runtime) => {
    it.each(["the folder's path", "a URL"])(
      `installs both packages from %s, and ${runtime[0]} runs them`,
      async (from) => {
        const { dir, env } = project([...tools], from === "a URL" ? url : out);
        const lines = readmeCommands(guide(), block);
        expect(lines.at(-1)).toMatch(
          new RegExp(
            `^${manager === "deno" ? "deno run -A npm:npm install --allow-remote=root" : manager === "bun" ? "bun add" : manager === "npm" ? "npm install --allow-remote=root" : "pnpm add"} "\\$RELEASE/petstore-core-1\\.0\\.0\\.tgz" "\\$RELEASE/petstore-adapters-1\\.0\\.0\\.tgz"$`,
          ),
        );
        for (const line of lines) await runLine(line, dir, env);
        writeFileSync(join(dir, "check.mjs"), CHECK);
        const [command, ...args] = runtime;
        const { stdout } = await run(
          command === "node" ? "node" : join(ROOT, "node_modules/.bin", command),
          [...args, "check.mjs"],
          { cwd: dir, env, timeout: 60_000 },
        );
        expect(JSON.parse(stdout.trim().split("\n").at(-1)!)).toEqual({ status: 200, limit: "60", libsql: "Rex" });
      },
      180_000,
    );
  });

  it("fetches, checks and installs the binary from a URL, which then runs", async () => {
    const { dir, env } = project([], url);
    const installed = join(dir, "bin", "petstore");
    mkdirSync(join(dir, "bin"));
    // Where the binary goes is the reader's choice: here, not /usr/local/bin.
    const lines = readmeCommands(guide(), 5).map((line) => line.replace("/usr/local/bin/petstore", installed));
    expect(lines[0]).toBe('curl -fL -O "$RELEASE/petstore-linux-x64" -O "$RELEASE/SHA256SUMS"');
    let output = "";
    for (const line of lines) output += await runLine(line, dir, { ...env, PATH: `${join(dir, "bin")}:${env.PATH}` });
    expect(output).toContain("petstore-linux-x64: OK");
    expect(output).toMatch(
      /petstore 1\.0\.0 \(commit [0-9a-f]{12}(-dirty)?, bun \d+\.\d+\.\d+, target bun-linux-x64\)/,
    );
  }, 60_000);
});

const aarch64 = ["qemu-aarch64-static", "-L", "/usr/aarch64-linux-gnu"];
describe.each([
  ["linux-x64", "bun-linux-x64", []],
  ["linux-arm64", "bun-linux-arm64", aarch64],
])("petstore-%s, run here", (name, target, emulator) => {
  const command = (...args: string[]) => [...emulator, join(out, `petstore-${name}`), ...args];

  it("prints its build, makes a key in a new file database, and answers an authenticated request", async () => {
    const [executable, ...args] = command("--version");
    const version = await cli(args, { executable: executable! });
    expect(version.stdout.trim()).toMatch(
      new RegExp(`^petstore 1\\.0\\.0 \\(commit [0-9a-f]{12}(-dirty)?, bun \\d+\\.\\d+\\.\\d+, target ${target}\\)$`),
    );

    const url = `file:${join(db, `${name}.db`)}`;
    const [keysExecutable, ...keysArgs] = command("keys", "create", "--plan", "free", "--db", url, "--json");
    const created = await cli(keysArgs, { executable: keysExecutable! });
    expect(created.code, created.stderr).toBe(0);
    const { key } = JSON.parse(created.stdout) as { key: string };

    const server = await startServer(command("serve", "--host", "127.0.0.1", "--port", "0", "--db", url));
    try {
      const response = await fetch(`${server.url}/v1/pets`, {
        headers: { authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(20_000),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual([]);
      expect([response.headers.get("x-ratelimit-limit"), response.headers.get("x-ratelimit-remaining")]).toEqual([
        "60",
        "59",
      ]);
      expect(Number(response.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000);
    } finally {
      expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });
    }
  }, 90_000);
});

/** The addon `release.ts` embedded, from its cache of `npm pack`ed @libsql packages. */
function addonOf(pkg: string): Buffer {
  const cache = join(tmpdir(), "petstore-libsql-addons");
  const dir = readdirSync(cache).find((entry) => entry.startsWith(`${pkg.replace("/", "+")}-`));
  if (dir === undefined) throw new Error(`no ${pkg} in ${cache}`);
  return readFileSync(join(cache, dir, "package/index.node"));
}

describe.each([
  [
    "linux-x64",
    /ELF 64-bit LSB executable, x86-64, .*interpreter \/lib64\/ld-linux-x86-64\.so\.2/,
    "@libsql/linux-x64-gnu",
  ],
  [
    "linux-x64-musl",
    /ELF 64-bit LSB executable, x86-64, .*interpreter \/lib\/ld-musl-x86_64\.so\.1/,
    "@libsql/linux-x64-musl",
  ],
  [
    "linux-arm64",
    /ELF 64-bit LSB executable, ARM aarch64, .*interpreter \/lib\/ld-linux-aarch64\.so\.1/,
    "@libsql/linux-arm64-gnu",
  ],
  [
    "linux-arm64-musl",
    /ELF 64-bit LSB executable, ARM aarch64, .*interpreter \/lib\/ld-musl-aarch64\.so\.1/,
    "@libsql/linux-arm64-musl",
  ],
  ["darwin-x64", /Mach-O 64-bit x86_64 executable/, "@libsql/darwin-x64"],
  ["darwin-arm64", /Mach-O 64-bit arm64 executable/, "@libsql/darwin-arm64"],
  ["windows-x64.exe", /PE32\+ executable \(console\) x86-64, for MS Windows/, "@libsql/win32-x64-msvc"],
])("petstore-%s", (name, format, pkg) => {
  it(`is the platform's executable format and embeds ${pkg}'s addon`, async () => {
    const file = join(out, `petstore-${name}`);
    expect((await run("file", ["-b", file])).stdout).toMatch(format);
    const addon = addonOf(pkg);
    // 4 KiB from the middle of the addon: its code, not a header every addon shares.
    const middle = Math.floor(addon.length / 2);
    const slice = addon.subarray(middle, middle + 4096);
    expect(readFileSync(file).includes(slice)).toBe(true);
  });
});
