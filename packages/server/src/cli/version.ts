import process from "node:process";
import packageJson from "../../package.json" with { type: "json" };

// Set by build.ts through Bun's `define` in a compiled binary; undeclared when run from source.
declare const PETSTORE_COMMIT: string;
declare const PETSTORE_TARGET: string;

/** The server package's version. */
export const VERSION: string = packageJson.version;

const compiled = typeof PETSTORE_COMMIT === "string";

/**
 * What the build was made of, for `--version` and `petstore_build_info`: the git commit and
 * compile target (from source: commit "unknown", target `source-<runtime>-<platform>-<arch>`).
 */
export const BUILD_INFO: { version: string; commit: string; target: string } = {
  version: VERSION,
  commit: compiled ? PETSTORE_COMMIT : "unknown",
  target: compiled
    ? PETSTORE_TARGET
    : `source-${"Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node"}-${process.platform}-${process.arch}`,
};

/**
 * What `petstore --version` prints: the version, the git commit and target it was built from,
 * and the runtime it runs on (from source, the commit is unknown and the target is the host).
 * @example versionLine() // "petstore 1.0.0 (commit 575031c0a1b2, bun 1.4.5, target bun-linux-x64)"
 */
export function versionLine(): string {
  const { bun, deno, node } = process.versions as { bun?: string; deno?: string; node: string };
  const runtime = bun ? `bun ${bun}` : deno ? `deno ${deno}` : `node ${node}`;
  return compiled
    ? `petstore ${VERSION} (commit ${PETSTORE_COMMIT}, ${runtime}, target ${PETSTORE_TARGET})`
    : `petstore ${VERSION} (run from source: commit unknown, ${runtime}, ${process.platform}-${process.arch})`;
}
