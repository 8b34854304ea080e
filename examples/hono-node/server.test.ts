import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServedExample, startServerExample } from "../_support/start-example.js";

describe("the hono-node example", () => {
  let example: ServedExample;
  beforeAll(async () => {
    example = await startServerExample("examples/hono-node/server.ts", { runtime: "node" });
  });
  afterAll(() => example?.stop());

  it("serves the app's routes and the Pet Store under /v1", async () => {
    expect(await (await fetch(`${example.base}/`)).text()).toBe("Welcome to the shop");
    expect(await (await fetch(`${example.base}/health`)).json()).toEqual({ ok: true });
    const created = await fetch(`${example.base}/v1/pets`, {
      method: "POST",
      headers: { ...example.auth, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe("/v1/pets/1");
  });

  it("limits callers without a key by their socket address", async () => {
    const first = await fetch(`${example.base}/v1/pets`);
    expect(first.status).toBe(401);
    expect(first.headers.get("x-ratelimit-limit")).toBe("60");
    const second = await fetch(`${example.base}/v1/pets`);
    expect(Number(second.headers.get("x-ratelimit-remaining"))).toBe(
      Number(first.headers.get("x-ratelimit-remaining")) - 1,
    );
  });
});
