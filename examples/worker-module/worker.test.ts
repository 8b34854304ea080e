import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateApiKey } from "@petstore/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, freePort, type RunningExample, startExample } from "../_support/start-example.js";
import { createClient } from "@libsql/client";
import { petstoreWorker } from "./worker.js";

describe("the worker-module example", () => {
  const key = generateApiKey();
  const dir = mkdtempSync(join(tmpdir(), "petstore-worker-"));
  let example: RunningExample;
  let base: string;
  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    example = await startExample(`${BIN}/bun`, ["--conditions=@petstore/source", "examples/worker-module/local.ts"], {
      ready: /curl .*\n/,
      env: { PORT: String(port), PETSTORE_API_KEY: key, LIBSQL_URL: `file:${join(dir, "worker.db")}` },
    });
  });
  afterAll(async () => {
    await example?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves callers with the key from its env binding", async () => {
    const auth = { Authorization: `Bearer ${key}` };
    const created = await fetch(`${base}/v1/pets`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    const listed = await fetch(`${base}/v1/pets`, { headers: auth });
    expect(await listed.json()).toEqual([{ id: 1, name: "Rex", categoryId: 1 }]);
    expect(listed.headers.get("x-ratelimit-remaining")).toBe("58");
  });

  it("counts callers without a key by the address the platform gives, not one they send", async () => {
    const first = await fetch(`${base}/v1/pets`, { headers: { "CF-Connecting-IP": "203.0.113.1" } });
    const second = await fetch(`${base}/v1/pets`, { headers: { "CF-Connecting-IP": "203.0.113.2" } });
    expect([first.status, second.status]).toEqual([401, 401]);
    expect([first.headers.get("x-ratelimit-remaining"), second.headers.get("x-ratelimit-remaining")]).toEqual([
      "59",
      "58",
    ]);
  });

  it("refuses to start with a malformed key binding, and starts once the binding is right", async () => {
    const request = () => new Request("http://worker.test/v1/pets", { headers: { Authorization: `Bearer ${key}` } });
    const worker = petstoreWorker((env) => createClient({ url: env.LIBSQL_URL }));
    const env = { LIBSQL_URL: `file:${join(dir, "bindings.db")}`, PETSTORE_API_KEY: "not-a-key" };
    await expect(worker.fetch(request(), env)).rejects.toThrow("PETSTORE_API_KEY");
    expect((await worker.fetch(request(), { ...env, PETSTORE_API_KEY: key })).status).toBe(200);
  });
});
