/**
 * Compiles the petstore CLI into one executable, dist/petstore, with `bun build --compile`.
 * Usage: bun build.ts [--target bun-linux-x64|bun-linux-x64-musl|bun-linux-arm64|...] [--outfile PATH] [--addon PATH]
 *
 * libsql/index.js loads its native addon with a computed `require(\`@libsql/${target}\`)`,
 * which the bundler cannot follow: the binary would fail away from node_modules with
 * "Cannot find module '@libsql/linux-x64-gnu'". The plugin below replaces that lookup with a
 * static require of the addon's absolute path, which `--compile` embeds in the executable.
 * `--addon` names the addon file to embed instead (release.ts fetches each platform's from the
 * registry). The git commit and the target are compiled in for `petstore --version`.
 * Types are not checked here (Bun strips them): `npm run build` runs `tsc -b` first.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { BunPlugin, Build } from "bun";

const { values } = parseArgs({
  options: { target: { type: "string" }, outfile: { type: "string" }, addon: { type: "string" } },
});
const target = (values.target ?? `bun-${process.platform}-${process.arch}`) as Build.CompileTarget;
const outfile = resolve(import.meta.dir, values.outfile ?? "dist/petstore");

/** The @libsql package holding the addon for a Bun compile target; glibc unless "-musl". */
function nativePackage(target: string): string {
  const [, os, arch] = target.split("-");
  const libc =
    os === "linux" ? (target.includes("musl") ? "-musl" : "-gnu") : os === "win32" || os === "windows" ? "-msvc" : "";
  return `@libsql/${os === "windows" ? "win32" : os}-${arch}${libc}`;
}

// Resolved from the libsql package, as its own require() would at run time.
const requireFromLibsql = createRequire(createRequire(import.meta.path).resolve("libsql/package.json"));
function installedAddon(): string {
  try {
    return join(dirname(requireFromLibsql.resolve(`${nativePackage(target)}/package.json`)), "index.node");
  } catch {
    throw new Error(
      `No libSQL native addon for ${target}: install ${nativePackage(target)} or pass --addon (npm run release fetches it)`,
    );
  }
}
const addon = values.addon === undefined ? installedAddon() : resolve(values.addon);
if (!existsSync(addon)) throw new Error(`The libSQL native addon is missing: ${addon}`);

/** The commit built from, "-dirty" when tracked files differ from it; "unknown" outside a git checkout. */
function gitCommit(): string {
  const git = (...args: string[]) =>
    execFileSync("git", args, { cwd: import.meta.dir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  try {
    return (
      git("rev-parse", "--short=12", "HEAD") +
      (git("status", "--porcelain", "--untracked-files=no") === "" ? "" : "-dirty")
    );
  } catch {
    return "unknown";
  }
}

let embedded = false;
const embedLibsqlAddon: BunPlugin = {
  name: "embed-libsql-addon",
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]libsql[\\/]index\.js$/ }, async ({ path }) => {
      const source = await Bun.file(path).text();
      const requireNative = /function requireNative\(\) \{[\s\S]*?\n\}\n/;
      if (!requireNative.test(source)) {
        throw new Error(
          `${path}: requireNative() not found, so the native addon cannot be embedded (did libsql change?)`,
        );
      }
      const contents = source.replace(
        requireNative,
        `function requireNative() {\n  return require(${JSON.stringify(addon)});\n}\n`,
      );
      embedded = true;
      return { contents, loader: "js" };
    });
  },
};

// Build beside the target and rename, so a reader never sees a half-written executable. The
// name ends like the target's, as Bun appends ".exe" to a Windows outfile that does not.
const partial = join(dirname(outfile), `.partial-${process.pid}-${basename(outfile)}`);
mkdirSync(dirname(outfile), { recursive: true });
const result = await Bun.build({
  entrypoints: [join(import.meta.dir, "src/main.ts")],
  compile: { target, outfile: partial },
  conditions: ["@petstore/source"],
  minify: true,
  // The bundle compiled to JavaScriptCore bytecode at build time, so a start skips parsing
  // and compiling its 2.4 MB of JavaScript: a restart on an existing database went from a
  // median of 57 to 35 ms here. ESM bytecode needs --compile, which this is.
  bytecode: true,
  format: "esm",
  // Code loaded with import() in its own chunk, evaluated when imported: with one chunk, the
  // bundler hoists every bundled package's imports of built-in modules to the top, so each
  // start loaded node:net, node:tls, node:stream and node:perf_hooks for postgres.js (about
  // 5 ms) although a file database never uses it (open-storage.ts imports it for Postgres).
  splitting: true,
  define: { PETSTORE_COMMIT: JSON.stringify(gitCommit()), PETSTORE_TARGET: JSON.stringify(target) },
  plugins: [embedLibsqlAddon],
});
if (!result.success) {
  rmSync(partial, { force: true });
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
if (!embedded) {
  rmSync(partial, { force: true });
  throw new Error(
    "libsql/index.js was not part of the bundle, so no native addon was embedded: is the libSQL adapter imported?",
  );
}
renameSync(partial, outfile);
console.log(`built ${outfile} for ${target} (libSQL addon ${nativePackage(target)})`);
