import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createClient } from "@libsql/client";
import { generateApiKey } from "@petstore/core";
import type { Metafile } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleWorker } from "./_bundle.js";

/**
 * The worker-module example bundled for a Workers-style target. What must hold: the libSQL,
 * D1 and Durable Object adapters come without native code (no `libsql` package, no
 * `@libsql/<platform>` addon) and without any `node:` import, and the bundled code serves
 * requests for real.
 */
describe("the libSQL, D1 and Durable Object adapters bundled for a Workers-style target", () => {
  const dir = mkdtempSync(join(tmpdir(), "petstore-edge-"));
  let code: string;
  let metafile: Metafile;
  beforeAll(async () => {
    ({ code, metafile } = await bundleWorker());
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("has no native addon, no libsql package and no node: import", () => {
    const inputs = Object.keys(metafile.inputs);
    for (const adapters of ["libsql", "d1", "durable-objects"])
      expect(inputs.some((path) => path.includes(`packages/adapters/src/${adapters}/`))).toBe(true);
    expect(inputs.filter((path) => /node_modules\/(libsql|@libsql\/(linux|darwin|win32)[^/]*)\//.test(path))).toEqual(
      [],
    );
    expect(inputs.filter((path) => path.endsWith(".node") || path.includes("/libsql/local/"))).toEqual([]);
    const imports = Object.values(metafile.outputs).flatMap((output) =>
      output.imports.map((imported) => imported.path),
    );
    expect(imports).toEqual([]);
    expect(code).not.toMatch(/\bfrom\s*["']node:|require\(["']node:|import\(["']node:/);
  });

  it("serves requests with a libSQL client handed in at run time", async () => {
    const file = join(dir, "worker.mjs");
    writeFileSync(file, code);
    const bundled = (await import(pathToFileURL(file).href)) as typeof import("../../examples/worker-module/worker.js");
    // No libSQL server here: a plain client on a local file, which the bundled adapters use
    // through the same Client interface as a remote one.
    const client = createClient({ url: `file:${join(dir, "edge.db")}` });
    try {
      const worker = bundled.petstoreWorker(() => client);
      const key = generateApiKey();
      const env = { LIBSQL_URL: "libsql://unused.test", PETSTORE_API_KEY: key };
      const call = (init: RequestInit = {}) =>
        worker.fetch(
          new Request("http://worker.test/v1/pets", {
            ...init,
            headers: { Authorization: `Bearer ${key}`, "CF-Connecting-IP": "203.0.113.9", ...init.headers },
          }),
          env,
        );
      const created = await call({
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ name: "Rex", categoryId: 1 }),
      });
      expect(created.status).toBe(201);
      const listed = await call();
      expect(listed.status).toBe(200);
      expect(await listed.json()).toEqual([{ id: 1, name: "Rex", categoryId: 1 }]);
      expect(listed.headers.get("x-ratelimit-limit")).toBe("60");
      expect(listed.headers.get("x-ratelimit-remaining")).toBe("58");
      expect((await client.execute("SELECT count(*) AS n FROM pets")).rows[0]!.n).toBe(1);
    } finally {
      client.close();
    }
  });
});
