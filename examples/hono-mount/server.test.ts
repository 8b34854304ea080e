import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, freePort, type RunningExample, startExample } from "../_support/start-example.js";

describe("the hono-mount example", () => {
  let example: RunningExample;
  let base: string;
  let auth: { Authorization: string };
  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    example = await startExample(`${BIN}/bun`, ["--conditions=@petstore/source", "examples/hono-mount/server.ts"], {
      ready: /curl .*\n/,
      env: { PORT: String(port) },
    });
    auth = { Authorization: `Bearer ${/Bearer (psk_\w+)/.exec(example.output())![1]}` };
  });
  afterAll(() => example?.stop());

  it("keeps serving the app's own routes", async () => {
    const home = await fetch(`${base}/`);
    expect(await home.text()).toBe("Welcome to the shop");
    const health = await fetch(`${base}/health`);
    expect(await health.json()).toEqual({ ok: true });
    expect(health.headers.get("x-ratelimit-limit")).toBeNull();
  });

  it("serves the Pet Store under /v1 to a caller with a key", async () => {
    const created = await fetch(`${base}/v1/pets`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Rex", categoryId: 1, status: "available" }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe("/v1/pets/1");
    const listed = await fetch(`${base}/v1/pets?status=available`, { headers: auth });
    expect(await listed.json()).toEqual([{ id: 1, name: "Rex", categoryId: 1, status: "available" }]);
    expect(listed.headers.get("x-ratelimit-remaining")).toBe("58");
  });

  it("answers a caller without a key with 401, counted against its address", async () => {
    const response = await fetch(`${base}/v1/pets`);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="petstore"');
    expect(response.headers.get("x-ratelimit-remaining")).toBe("59");
  });

  it("leaves paths outside /v1 to the app", async () => {
    const response = await fetch(`${base}/pets`, { headers: auth });
    expect(response.status).toBe(404);
    expect(await response.text()).toBe("404 Not Found");
  });
});
