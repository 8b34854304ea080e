import { join, resolve } from "node:path";
import { build, type Metafile } from "esbuild";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * examples/worker-module/worker.ts bundled as a Workers-style platform bundles it: for the
 * browser, ESM, resolving packages the way workerd does (the repository's own packages from
 * their sources, the same modules their built files hold).
 */
export async function bundleWorker(): Promise<{ code: string; metafile: Metafile }> {
  const result = await build({
    entryPoints: [join(ROOT, "examples/worker-module/worker.ts")],
    bundle: true,
    format: "esm",
    platform: "browser",
    conditions: ["@petstore/source", "workerd", "worker", "browser"],
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  return { code: result.outputFiles[0]!.text, metafile: result.metafile };
}
