import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

/** The repository's root. */
export const ROOT = resolve(import.meta.dirname, "../..");
/** The compiled executable the end-to-end suites run. */
export const BINARY = join(ROOT, "packages/server/dist/petstore");

const SOURCES = [
  "packages/core/src",
  "packages/adapters/src",
  "packages/server/src",
  "packages/server/build.ts",
  "packages/server/package.json",
];

function newestChange(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestChange(join(path, name))));
}

/**
 * Builds dist/petstore when it is missing or older than any source it is made from. Parallel
 * callers may both build: the build renames a finished file into place, so nobody runs a
 * half-written one.
 */
export function ensureBinary(): string {
  const stale =
    !existsSync(BINARY) ||
    statSync(BINARY).mtimeMs < Math.max(...SOURCES.map((source) => newestChange(join(ROOT, source))));
  if (stale) {
    execFileSync(join(ROOT, "node_modules/.bin/bun"), ["packages/server/build.ts"], {
      cwd: ROOT,
      stdio: "pipe",
      timeout: 120_000,
    });
  }
  return BINARY;
}
