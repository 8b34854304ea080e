import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, type ServedExample, startServerExample } from "../_support/start-example.js";

describe("the express example", () => {
  let example: ServedExample;
  beforeAll(async () => {
    example = await startServerExample("examples/express/server.ts", { runtime: "node" });
  });
  afterAll(() => example?.stop());

  it("serves the Pet Store under /api/petstore, with Location under that path", async () => {
    const created = await fetch(`${example.base}/api/petstore/pets`, {
      method: "POST",
      headers: { ...example.auth, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe("/api/petstore/pets/1");
    const listed = await fetch(`${example.base}/api/petstore/pets`, { headers: example.auth });
    expect(await listed.json()).toEqual([{ id: 1, name: "Rex", categoryId: 1 }]);
    expect(listed.headers.get("x-ratelimit-remaining")).toBe("58");
    expect((await fetch(`${example.base}/api/petstore/pets`)).status).toBe(401);
  });

  it("keeps the app's own routes and their body parser", async () => {
    expect(await (await fetch(`${example.base}/health`)).json()).toEqual({ ok: true });
    const echoed = await fetch(`${example.base}/api/echo`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: '{"a":1}',
    });
    expect(await echoed.json()).toEqual({ a: 1 });
  });
});

describe("the express example with a body parser registered for every path", () => {
  let example: ServedExample;
  beforeAll(async () => {
    // The mistake the README warns of: app.use(express.json()) before the Pet Store's mount.
    const source = readFileSync(`${ROOT}examples/express/server.ts`, "utf8");
    const misconfigured = source.replace("const app = express();", "const app = express();\napp.use(express.json());");
    expect(misconfigured).not.toBe(source);
    writeFileSync(`${ROOT}examples/express/.misconfigured.test-server.ts`, misconfigured);
    example = await startServerExample("examples/express/.misconfigured.test-server.ts", { runtime: "node" });
  });
  afterAll(async () => {
    await example?.stop();
    rmSync(`${ROOT}examples/express/.misconfigured.test-server.ts`, { force: true });
  });

  it("answers a create whose body the host already read 500 (the host's bug), with the contract's headers", async () => {
    const created = await fetch(`${example.base}/api/petstore/pets`, {
      method: "POST",
      headers: { ...example.auth, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    });
    expect(created.status).toBe(500);
    expect(await created.json()).toMatchObject({ code: "internal_error" });
    expect(created.headers.get("x-request-id")).toBeTruthy();
    expect(created.headers.get("x-ratelimit-limit")).toBe("60");
    // Reads are not affected.
    expect((await fetch(`${example.base}/api/petstore/pets`, { headers: example.auth })).status).toBe(200);
  });
});
