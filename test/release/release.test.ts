/**
 * The release: `release.ts` builds every platform's binary once for this run, SHA256SUMS
 * checks out, and what can run here runs: linux-x64 natively and linux-arm64 under
 * qemu-user (with Debian's arm64 cross libc). The musl binaries cannot run on this Debian:
 * Bun's musl runtime needs a musl-built libstdc++ and libgcc (Alpine's), which neither
 * Debian nor the npm registry provide; they are checked like darwin and windows: format,
 * architecture, interpreter and the embedded addon.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanUp, cli, startServer, stopProcess } from "../e2e/_processes.js";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "../..");
const out = mkdtempSync(join(tmpdir(), "petstore-release-"));
const db = mkdtempSync(join(tmpdir(), "petstore-release-db-"));

beforeAll(async () => {
  const started = performance.now();
  await run(join(ROOT, "node_modules/.bin/bun"), ["packages/server/release.ts", "--out", out], { cwd: ROOT, timeout: 540_000 });
  const sizes = readdirSync(out).map((file) => `${file} ${(statSync(join(out, file)).size / 2 ** 20).toFixed(1)} MiB`);
  console.log(`release: built in ${((performance.now() - started) / 1000).toFixed(1)} s\n${sizes.join("\n")}`);
}, 600_000);
afterAll(async () => {
  await cleanUp();
  rmSync(out, { recursive: true, force: true });
  rmSync(db, { recursive: true, force: true });
});

it("writes the seven binaries and a SHA256SUMS that sha256sum -c accepts", async () => {
  const { stdout } = await run("sha256sum", ["-c", "SHA256SUMS"], { cwd: out, timeout: 60_000 });
  expect(stdout.trim().split("\n").sort()).toEqual(
    ["darwin-arm64", "darwin-x64", "linux-arm64", "linux-arm64-musl", "linux-x64", "linux-x64-musl", "windows-x64.exe"].map((name) => `petstore-${name}: OK`).sort(),
  );
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
    expect(version.stdout.trim()).toMatch(new RegExp(`^petstore 1\\.0\\.0 \\(commit [0-9a-f]{12}(-dirty)?, bun \\d+\\.\\d+\\.\\d+, target ${target}\\)$`));

    const url = `file:${join(db, `${name}.db`)}`;
    const [keysExecutable, ...keysArgs] = command("keys", "create", "--plan", "free", "--db", url, "--json");
    const created = await cli(keysArgs, { executable: keysExecutable! });
    expect(created.code, created.stderr).toBe(0);
    const { key } = JSON.parse(created.stdout) as { key: string };

    const server = await startServer(command("serve", "--host", "127.0.0.1", "--port", "0", "--db", url));
    try {
      const response = await fetch(`${server.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(20_000) });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual([]);
      expect([response.headers.get("x-ratelimit-limit"), response.headers.get("x-ratelimit-remaining")]).toEqual(["60", "59"]);
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
  ["linux-x64", /ELF 64-bit LSB executable, x86-64, .*interpreter \/lib64\/ld-linux-x86-64\.so\.2/, "@libsql/linux-x64-gnu"],
  ["linux-x64-musl", /ELF 64-bit LSB executable, x86-64, .*interpreter \/lib\/ld-musl-x86_64\.so\.1/, "@libsql/linux-x64-musl"],
  ["linux-arm64", /ELF 64-bit LSB executable, ARM aarch64, .*interpreter \/lib\/ld-linux-aarch64\.so\.1/, "@libsql/linux-arm64-gnu"],
  ["linux-arm64-musl", /ELF 64-bit LSB executable, ARM aarch64, .*interpreter \/lib\/ld-musl-aarch64\.so\.1/, "@libsql/linux-arm64-musl"],
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
