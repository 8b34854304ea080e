/**
 * Builds the release (`npm run release`) into one folder, dist/release/, holding all a user
 * downloads: the binaries petstore-<os>-<arch>[-musl][.exe] for every platform below (each
 * with its own libSQL addon embedded), the packed @petstore/core and @petstore/adapters,
 * SHA256SUMS of them all, and INSTALL.md with the install lines for npm, pnpm, Bun, Deno and
 * the binary, which work from the folder's path or from a URL serving it as is.
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
    const tarball = execFileSync("npm", ["pack", `${pkg}@${version}`, "--pack-destination", dir, "--silent"], {
      encoding: "utf8",
    }).trim();
    execFileSync("tar", ["xzf", join(dir, tarball), "-C", dir, "package/index.node"]);
  }
  return addon;
}

const { values } = parseArgs({ options: { out: { type: "string" }, only: { type: "string" } } });
const out = resolve(values.out ?? join(import.meta.dir, "../../dist/release"));
const names = values.only?.split(",") ?? Object.keys(PLATFORMS);
mkdirSync(out, { recursive: true });

const sums: string[] = [];
const sha256 = (file: string) =>
  `${createHash("sha256")
    .update(readFileSync(join(out, file)))
    .digest("hex")}  ${file}\n`;
for (const name of names) {
  const platform = PLATFORMS[name];
  if (!platform) throw new Error(`Unknown platform ${name}: one of ${Object.keys(PLATFORMS).join(", ")}`);
  const file = `petstore-${name}${name.startsWith("windows") ? ".exe" : ""}`;
  rmSync(join(out, file), { force: true });
  const args = [
    "build.ts",
    "--target",
    platform.target,
    "--addon",
    fetchAddon(platform.addon),
    "--outfile",
    join(out, file),
  ];
  execFileSync(process.execPath, args, { cwd: import.meta.dir, stdio: "inherit" });
  sums.push(sha256(file));
}
// The packages as `npm publish` would upload them (each one's prepack builds it).
const root = join(import.meta.dir, "../..");
const version: string = JSON.parse(readFileSync(join(root, "packages/core/package.json"), "utf8")).version;
const tarballs = ["core", "adapters"].map((name) => `petstore-${name}-${version}.tgz`);
for (const tarball of tarballs) rmSync(join(out, tarball), { force: true });
execFileSync(
  "npm",
  ["pack", "--workspace", "packages/core", "--workspace", "packages/adapters", "--pack-destination", out, "--silent"],
  { cwd: root, stdio: ["ignore", "ignore", "inherit"] },
);
sums.push(...tarballs.map(sha256));
// sha256sum's own format, so `sha256sum -c SHA256SUMS` checks every file.
writeFileSync(join(out, "SHA256SUMS"), sums.join(""));
writeFileSync(join(out, "INSTALL.md"), installGuide(version));
console.log(`wrote ${names.length} binaries, ${tarballs.join(" and ")}, SHA256SUMS and INSTALL.md to ${out}`);

/**
 * What a user reads in the folder. Every line works with RELEASE set to the folder's path or
 * to a URL serving it (test/release runs each manager's lines both ways). The adapters depend
 * on `@petstore/core@^<version>`, which no registry has yet: npm and Deno's npm take it from
 * the tarball installed beside it; Bun and pnpm need an override pointing at that tarball.
 */
function installGuide(version: string): string {
  const core = `"$RELEASE/petstore-core-${version}.tgz"`;
  const both = `${core} "$RELEASE/petstore-adapters-${version}.tgz"`;
  return `# Pet Store ${version}

This folder is the release: the library's two npm packages (\`petstore-core-${version}.tgz\`,
\`petstore-adapters-${version}.tgz\`), the \`petstore\` server binary for seven platforms, and
\`SHA256SUMS\` of every file. It works where it lies or served as it is: set \`RELEASE\` to the
folder's path or to its URL, then run the lines of your package manager in your project.

\`\`\`sh
RELEASE=https://example.com/petstore/${version}    # or the folder's path, e.g. RELEASE=$HOME/petstore-${version}
\`\`\`

## The library: @petstore/core and @petstore/adapters

npm (Node 20 or later; also a Bun or Deno project with a \`package.json\`). \`--allow-remote=root\`
lets npm 12 fetch your project's own dependencies from a URL, which it otherwise refuses:

\`\`\`sh
npm install --allow-remote=root ${both}
\`\`\`

pnpm: the adapters' dependency on \`@petstore/core\` is pointed at the same tarball, and pnpm
is told that a dependency may come from a URL:

\`\`\`sh
printf 'overrides:\\n  "@petstore/core": "%s"\\nblockExoticSubdeps: false\\n' ${core} >> pnpm-workspace.yaml
pnpm add ${both}
\`\`\`

Bun: the same override, in \`package.json\`:

\`\`\`sh
bun pm pkg set "overrides.@petstore/core=$RELEASE/petstore-core-${version}.tgz"
bun add ${both}
\`\`\`

Deno installs npm packages from a registry only: npm, run by Deno (no Node needed), installs
the tarballs into \`node_modules\` and writes the \`package.json\` through which Deno finds them:

\`\`\`sh
deno run -A npm:npm install --allow-remote=root ${both}
\`\`\`

Once the packages are published: \`npm install @petstore/core @petstore/adapters\` (or \`pnpm add\`,
\`bun add\`, \`deno add npm:@petstore/core npm:@petstore/adapters\`).

## The server binary

| your machine | file |
|---|---|
| Linux x64, glibc (Debian, Ubuntu, RHEL, ...) | \`petstore-linux-x64\` |
| Linux x64, musl (Alpine: \`apk add libstdc++ libgcc\`) | \`petstore-linux-x64-musl\` |
| Linux arm64, glibc | \`petstore-linux-arm64\` |
| Linux arm64, musl (Alpine) | \`petstore-linux-arm64-musl\` |
| macOS, Intel | \`petstore-darwin-x64\` |
| macOS, Apple silicon | \`petstore-darwin-arm64\` |
| Windows x64 | \`petstore-windows-x64.exe\` |

Fetch yours with \`SHA256SUMS\` (from the folder's path: \`cp\` both instead), check it, install it:

\`\`\`sh
curl -fL -O "$RELEASE/petstore-linux-x64" -O "$RELEASE/SHA256SUMS"
sha256sum --ignore-missing -c SHA256SUMS     # macOS: shasum -a 256 --ignore-missing -c SHA256SUMS
install -m 755 petstore-linux-x64 /usr/local/bin/petstore
petstore --version
\`\`\`
`;
}
