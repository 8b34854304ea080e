import { resolve } from "node:path";
import type { RateLimiter } from "@petstore/core";
import { type D1Database, migrateD1 } from "@petstore/adapters/d1";
import { type DurableObjectNamespace, durableObjectLimiter } from "@petstore/adapters/durable-objects";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { afterAll } from "vitest";

// Test support (imports vitest): D1 databases and Durable Objects in workerd, driven by
// miniflare, reached from the test process through miniflare's binding proxies.

const ROOT = resolve(import.meta.dirname, "../..");
/** The compatibility date of the example's wrangler configuration. */
export const COMPATIBILITY_DATE = "2025-09-01";

/** `entry` (module text) bundled as Workers bundle it: ESM for the browser, packages from their sources. */
export async function bundleForWorkers(entry: string): Promise<string> {
  const result = await build({
    stdin: { contents: entry, resolveDir: ROOT, loader: "ts" },
    bundle: true,
    format: "esm",
    platform: "browser",
    conditions: ["@petstore/source", "workerd", "worker", "browser"],
    write: false,
    logLevel: "silent",
  });
  return result.outputFiles[0]!.text;
}

/**
 * The namespace with each bucket's stub made once: through miniflare's proxy, `idFromName`
 * and `get` are round trips to workerd (in a worker they are local calls), and would triple
 * the cost of every hit. (Cast where it is called: miniflare declares the proxy's type oddly.)
 */
function stubsKept(namespace: DurableObjectNamespace): DurableObjectNamespace {
  const stubs = new Map<string, ReturnType<DurableObjectNamespace["get"]>>();
  return {
    idFromName: (name) => name,
    get(name) {
      let stub = stubs.get(name as string);
      if (stub === undefined) stubs.set(name as string, (stub = namespace.get(namespace.idFromName(name as string))));
      return stub;
    },
  };
}

/** A worker that only hosts the rate limiter's Durable Object class. */
const LIMITER_WORKER = `export { PetstoreRateLimiter } from "@petstore/adapters/durable-objects";
export default { fetch: () => new Response(null, { status: 404 }) };`;

/**
 * For a suite file: one workerd (started on first use, disposed after the file) with
 * `databases` empty D1 databases and the `PetstoreRateLimiter` class bound as `LIMITER`, in
 * memory. `database()` hands out the next empty database, migrated; `limiter()` a limiter on
 * the objects whose buckets no earlier `limiter()` used.
 */
export function useWorkerdBindings(databases = 100) {
  let started: Promise<Miniflare> | undefined;
  let claimed = 0;
  /** The next database, migrated while the test before it runs. */
  let next: Promise<D1Database> | undefined;
  let limiters = 0;
  let limiter: RateLimiter | undefined;
  afterAll(async () => (await started)?.dispose());

  async function start(): Promise<Miniflare> {
    const env: Record<string, { type: "d1"; id: string } | { type: "durable-object"; worker: string; exportName: string }> = {
      LIMITER: { type: "durable-object", worker: "bindings", exportName: "PetstoreRateLimiter" },
    };
    for (let i = 0; i < databases; i++) env[`DB${i}`] = { type: "d1", id: `db${i}` };
    return new Miniflare({
      // No discovery of, or by, other miniflare processes on this machine (other suites' too).
      enableDevRegistry: false,
      workers: [
        {
          config: {
            name: "bindings",
            compatibilityDate: COMPATIBILITY_DATE,
            manifest: { mainModule: "worker.mjs", modules: { "worker.mjs": { type: "esm", contents: await bundleForWorkers(LIMITER_WORKER) } } },
            env,
            exports: { PetstoreRateLimiter: { type: "durable-object", storage: "sqlite" } },
          },
        },
      ],
    });
  }

  async function migrate(index: number): Promise<D1Database> {
    const workerd = await (started ??= start());
    const db = await workerd.getD1Database(`DB${index}`);
    await migrateD1(db);
    return db;
  }
  const migrateNext = () => {
    if (claimed === databases) throw new Error(`useWorkerdBindings: all ${databases} databases handed out`);
    return migrate(claimed++);
  };

  return {
    database(): Promise<D1Database> {
      const handed = (next ??= migrateNext());
      next = claimed < databases ? migrateNext() : undefined;
      // Handled here and seen by the test that takes it: no unhandled rejection in between.
      next?.catch(() => {});
      return handed;
    },
    async limiter(): Promise<RateLimiter> {
      const workerd = await (started ??= start());
      limiter ??= durableObjectLimiter(stubsKept((await workerd.getDurableObjectNamespace("LIMITER")) as unknown as DurableObjectNamespace));
      const prefix = `limiter${++limiters}/`;
      const shared = limiter;
      return { hit: (input) => shared.hit({ ...input, bucket: prefix + input.bucket }) };
    },
  };
}
