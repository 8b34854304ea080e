/**
 * Builds the release binaries (`npm run release`): dist/release/petstore-<os>-<arch>[-musl][.exe]
 * for every platform below, each with its own libSQL addon embedded, and SHA256SUMS.
 * Usage: bun release.ts [--out DIR] [--only linux-x64,darwin-arm64,...]  (SHA256SUMS lists what this run built)
 *
 * Each addon is the `@libsql/<platform>` package at the version the installed `libsql` pins,
 * fetched with `npm pack` into a cache beside the temporary directory (nothing is committed);
 * Bun fetches its runtime for each target itself.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

/** Release file suffix -> Bun compile target and the package holding its libSQL addon. */
const PLATFORMS: Record<string, { target: string; addon: string }> = {
  "linux-x64": { target: "bun-linux-x64", addon: "@libsql/linux-x64-gnu" },
  "linux-x64-musl": { target: "bun-linux-x64-musl", addon: "@libsql/linux-x64-musl" },
  "linux-arm64": { target: "bun-linux-arm64", addon: "@libsql/linux-arm64-gnu" },
  "linux-arm64-musl": { target: "bun-linux-arm64-musl", addon: "@libsql/linux-arm64-musl" },
  "darwin-x64": { target: "bun-darwin-x64", addon: "@libsql/darwin-x64" },
  "darwin-arm64": { target: "bun-darwin-arm64", addon: "@libsql/darwin-arm64" },
  "windows-x64": { target: "bun-windows-x64", addon: "@libsql/win32-x64-msvc" },
};

/** The addon file of `pkg` at the version libsql pins, from the cache or fetched with `npm pack`. */
function fetchAddon(pkg: string): string {
  const libsql = JSON.parse(readFileSync(createRequire(import.meta.path).resolve("libsql/package.json"), "utf8"));
  const version: string = libsql.optionalDependencies[pkg];
  const dir = join(tmpdir(), "petstore-libsql-addons", `${pkg.replace("/", "+")}-${version}`);
  const addon = join(dir, "package", "index.node");
  if (!existsSync(addon)) {
    mkdirSync(dir, { recursive: true });
    const tarball = execFileSync("npm", ["pack", `${pkg}@${version}`, "--pack-destination", dir, "--silent"], { encoding: "utf8" }).trim();
    execFileSync("tar", ["xzf", join(dir, tarball), "-C", dir, "package/index.node"]);
  }
  return addon;
}

const { values } = parseArgs({ options: { out: { type: "string" }, only: { type: "string" } } });
const out = resolve(values.out ?? join(import.meta.dir, "../../dist/release"));
const names = values.only?.split(",") ?? Object.keys(PLATFORMS);
mkdirSync(out, { recursive: true });

const sums: string[] = [];
for (const name of names) {
  const platform = PLATFORMS[name];
  if (!platform) throw new Error(`Unknown platform ${name}: one of ${Object.keys(PLATFORMS).join(", ")}`);
  const file = `petstore-${name}${name.startsWith("windows") ? ".exe" : ""}`;
  rmSync(join(out, file), { force: true });
  const args = ["build.ts", "--target", platform.target, "--addon", fetchAddon(platform.addon), "--outfile", join(out, file)];
  execFileSync(process.execPath, args, { cwd: import.meta.dir, stdio: "inherit" });
  sums.push(`${createHash("sha256").update(readFileSync(join(out, file))).digest("hex")}  ${file}\n`);
}
// sha256sum's own format, so `sha256sum -c SHA256SUMS` checks every file.
writeFileSync(join(out, "SHA256SUMS"), sums.join(""));
console.log(`wrote ${names.length} binaries and SHA256SUMS to ${out}`);
