import process from "node:process";
import packageJson from "../package.json" with { type: "json" };

// Set by build.ts through Bun's `define` in a compiled binary; undeclared when run from source.
declare const PETSTORE_COMMIT: string;
declare const PETSTORE_TARGET: string;

/** The server package's version. */
export const VERSION: string = packageJson.version;

/**
 * What `petstore --version` prints: the version, the git commit and target it was built from,
 * and the runtime it runs on (from source, the commit is unknown and the target is the host).
 * @example versionLine() // "petstore 1.0.0 (commit 575031c0a1b2, bun 1.4.5, target bun-linux-x64)"
 */
export function versionLine(): string {
  const { bun, deno, node } = process.versions as { bun?: string; deno?: string; node: string };
  const runtime = bun ? `bun ${bun}` : deno ? `deno ${deno}` : `node ${node}`;
  return typeof PETSTORE_COMMIT === "string"
    ? `petstore ${VERSION} (commit ${PETSTORE_COMMIT}, ${runtime}, target ${PETSTORE_TARGET})`
    : `petstore ${VERSION} (run from source: commit unknown, ${runtime}, ${process.platform}-${process.arch})`;
}
