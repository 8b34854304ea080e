import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { RateLimiter } from "@petstore/core";
import { type D1Database, migrateD1 } from "@petstore/adapters/d1";
import { type DurableObjectNamespace, durableObjectLimiter } from "@petstore/adapters/durable-objects";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { afterAll } from "vitest";

// Test support (imports vitest): D1 databases and Durable Objects in workerd, driven by
// miniflare, reached from the test process.

const ROOT = resolve(import.meta.dirname, "../..");
/** The compatibility date of the worker-module example's wrangler configuration. */
export const COMPATIBILITY_DATE = /^compatibility_date = "([\d-]+)"$/m.exec(
  readFileSync(join(ROOT, "examples/worker-module/wrangler.toml"), "utf8"),
)![1]!;

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
 * The worker of the bindings: it hosts the rate limiter's Durable Object class, and runs the
 * D1 statements `byWorker` sends it on the real binding, answering D1's results (or the
 * error's message, which is what miniflare's binding proxy carries over too).
 */
const BINDINGS_WORKER = `export { PetstoreRateLimiter } from "@petstore/adapters/durable-objects";
export default {
  async fetch(request, env) {
    const { binding, statements, batch } = await request.json();
    const db = env[binding];
    try {
      const prepared = statements.map(({ sql, args }) => db.prepare(sql).bind(...args));
      return Response.json({ results: batch ? await db.batch(prepared) : [await prepared[0].all()] });
    } catch (error) {
      return Response.json({ error: String(error.message) });
    }
  },
};`;

type Statement = ReturnType<D1Database["prepare"]>;
type Sent = { sql: string; args: unknown[] };

/**
 * A D1 binding whose statements are sent whole to the bindings' worker, which runs them on
 * the real database: one request per statement or batch, where miniflare's binding proxy
 * makes three round trips (its `prepare` and `bind` are calls to workerd as well).
 */
function byWorker(workerd: Miniflare, binding: string): D1Database {
  async function send(statements: Sent[], batch: boolean) {
    const body = JSON.stringify({ binding, statements: statements.map(({ sql, args }) => ({ sql, args })), batch });
    const response = await workerd.dispatchFetch("http://bindings.test/", { method: "POST", body });
    const answer = (await response.json()) as { results: Awaited<ReturnType<Statement["all"]>>[] } | { error: string };
    if ("error" in answer) throw new Error(answer.error);
    return answer.results;
  }
  const statement = (sql: string, args: unknown[]): Statement & Sent => ({
    sql,
    args,
    bind: (...values) => statement(sql, values),
    all: async () => (await send([{ sql, args }], false))[0]!,
  });
  return {
    prepare: (sql) => statement(sql, []),
    batch: (statements) => send(statements as (Statement & Sent)[], true),
  };
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

/**
 * For a suite file: one workerd (started on first use, disposed after the file) with
 * `databases` empty D1 databases and the `PetstoreRateLimiter` class bound as `LIMITER`, in
 * memory. `database()` hands out the next empty database, migrated, as miniflare's binding
 * proxy (the binding itself: for the contract suites); `databaseByWorker()` as `byWorker`
 * (for suites of many requests); `limiter()` a limiter on the objects whose buckets no
 * earlier `limiter()` used.
 */
export function useWorkerdBindings(databases = 100) {
  let started: Promise<Miniflare> | undefined;
  let claimed = 0;
  /** The next database, migrated while the test before it runs. */
  let next: Promise<D1Database> | undefined;
  let nextByWorker: boolean | undefined;
  let namespace: DurableObjectNamespace | undefined;
  let limiters = 0;
  afterAll(async () => (await started)?.dispose());

  async function start(): Promise<Miniflare> {
    const env: Record<
      string,
      { type: "d1"; id: string } | { type: "durable-object"; worker: string; exportName: string }
    > = {
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
            manifest: {
              mainModule: "worker.mjs",
              modules: { "worker.mjs": { type: "esm", contents: await bundleForWorkers(BINDINGS_WORKER) } },
            },
            env,
            exports: { PetstoreRateLimiter: { type: "durable-object", storage: "sqlite" } },
          },
        },
      ],
    });
  }

  async function migrateLibsql(index: number, viaWorker: boolean): Promise<D1Database> {
    const workerd = await (started ??= start());
    const db = viaWorker ? byWorker(workerd, `DB${index}`) : await workerd.getD1Database(`DB${index}`);
    await migrateD1(db);
    return db;
  }
  const migrateNext = (viaWorker: boolean) => {
    if (claimed === databases) throw new Error(`useWorkerdBindings: all ${databases} databases handed out`);
    return migrateLibsql(claimed++, viaWorker);
  };
  function handOut(viaWorker: boolean): Promise<D1Database> {
    const handed = next !== undefined && nextByWorker === viaWorker ? next : migrateNext(viaWorker);
    next = claimed < databases ? migrateNext(viaWorker) : undefined;
    nextByWorker = viaWorker;
    // Handled here and seen by the test that takes it: no unhandled rejection in between.
    next?.catch(() => {});
    return handed;
  }

  return {
    database: () => handOut(false),
    databaseByWorker: () => handOut(true),
    /** A limiter deciding by `clock` (sent with each hit), or by the objects' own clock. */
    async limiter(clock?: () => number): Promise<Required<RateLimiter>> {
      const workerd = await (started ??= start());
      namespace ??= stubsKept(
        (await workerd.getDurableObjectNamespace("LIMITER")) as unknown as DurableObjectNamespace,
      );
      const prefix = `limiter${++limiters}/`;
      // Inside a group's braces, so that an account's buckets stay in one object.
      const own = (bucket: string) => (bucket.startsWith("{") ? `{${prefix}${bucket.slice(1)}` : prefix + bucket);
      const limiter = durableObjectLimiter(namespace, { clock });
      return {
        hit: ({ shared, ...input }) =>
          limiter.hit(
            shared
              ? { ...input, bucket: own(input.bucket), shared: shared.map((s) => ({ ...s, bucket: own(s.bucket) })) }
              : { ...input, bucket: own(input.bucket) },
          ),
        peek: (input) => limiter.peek({ ...input, bucket: own(input.bucket) }),
        unban: (bucket) => limiter.unban(own(bucket)),
      };
    },
  };
}
