/**
 * "The code before it": the tree of an earlier commit, extracted beside this checkout so that a
 * benchmark can run it next to today's, in process (its core and adapters imported from source)
 * and over HTTP (its own compiled binary). Extracted and compiled once per commit, into a
 * directory of the system's temporary directory named by the commit, and reused after.
 *
 * Its third-party packages are this checkout's (node_modules entries linked one by one), but its
 * `@petstore/*` packages are its own: a link to this checkout's whole node_modules would resolve
 * `@petstore/core` to today's source through the workspace links.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..");

/**
 * The tree after the speed work of issue 32 and before the work every request gained since
 * (usage counts, an account's second bucket, scopes, allowlists, the retired-secret estimate,
 * lapse): what target 1 compares today's code with.
 */
export const BEFORE_COMMIT = "23bfb84";

/**
 * Where the tree of `commit` is (or will be) extracted: one per checkout, since its
 * node_modules links into this checkout's (another checkout's, removed, would leave them dangling).
 */
const beforeDir = (commit = BEFORE_COMMIT) =>
  join(tmpdir(), "petstore-bench-before", `${commit}-${createHash("sha256").update(ROOT).digest("hex").slice(0, 8)}`);

const git = (...args: string[]) =>
  execFileSync("git", ["-C", ROOT, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

/**
 * The tree of `commit` (its `packages` and the root's TypeScript settings), extracted when
 * missing; its directory. Extracted beside its final place and renamed, so that a run stopped
 * halfway leaves nothing a later run would take for a whole tree.
 */
export function beforeTree(commit = BEFORE_COMMIT): string {
  const dir = beforeDir(commit);
  if (existsSync(join(dir, "packages"))) return dir;
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  try {
    const full = git("rev-parse", "--verify", `${commit}^{commit}`);
    execFileSync(
      "sh",
      [
        "-c",
        `git -C "$1" archive "$2" packages tsconfig.base.json package.json | tar -x -C "$3"`,
        "sh",
        ROOT,
        full,
        partial,
      ],
      { stdio: ["ignore", "ignore", "pipe"], timeout: 60_000 },
    );
    const modules = join(partial, "node_modules");
    mkdirSync(join(modules, "@petstore"), { recursive: true });
    for (const name of readdirSync(join(ROOT, "node_modules"))) {
      if (name !== "@petstore") symlinkSync(join(ROOT, "node_modules", name), join(modules, name));
    }
    for (const name of readdirSync(join(partial, "packages")))
      symlinkSync(join("..", "..", "packages", name), join(modules, "@petstore", name));
    renameSync(partial, dir);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    if (existsSync(join(dir, "packages"))) return dir; // another run finished first
    throw error;
  }
  return dir;
}

/** The binary of `commit`, compiled from its tree by its own build script when missing; its path. */
export function beforeBinary(commit = BEFORE_COMMIT): string {
  const dir = beforeTree(commit);
  const binary = join(dir, "petstore");
  if (existsSync(binary)) return binary;
  execFileSync(join(ROOT, "node_modules/.bin/bun"), ["build.ts", "--outfile", binary], {
    cwd: join(dir, "packages/server"),
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 180_000,
  });
  return binary;
}

/**
 * The file `specifier` (`@petstore/core`, `@petstore/adapters/memory`...) resolves to from the
 * tree of `commit`, for `import()`. Under Bun, with the caller's `--conditions=@petstore/source`:
 * the tree's source.
 */
export function beforeModule(specifier: string, commit = BEFORE_COMMIT): string {
  return Bun.resolveSync(specifier, join(beforeTree(commit), "packages"));
}
