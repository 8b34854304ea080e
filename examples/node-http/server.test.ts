import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServedExample, startServerExample } from "../_support/start-example.js";

describe("the node-http example", () => {
  let example: ServedExample;
  beforeAll(async () => {
    example = await startServerExample("examples/node-http/server.ts", { runtime: "node" });
  });
  afterAll(() => example?.stop());

  it("serves authenticated requests through Node's http server", async () => {
    const created = await fetch(`${example.base}/v1/pets`, {
      method: "POST",
      headers: { ...example.auth, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toEqual({ id: 1, name: "Rex", categoryId: 1 });
    const listed = await fetch(`${example.base}/v1/pets`, {
      headers: { ...example.auth, "X-Request-Id": "node-http-1" },
    });
    expect(await listed.json()).toEqual([{ id: 1, name: "Rex", categoryId: 1 }]);
    expect(listed.headers.get("x-request-id")).toBe("node-http-1");
    expect(listed.headers.get("x-ratelimit-remaining")).toBe("58");
  });

  it("answers HEAD without a body and a caller without a key with 401", async () => {
    const head = await fetch(`${example.base}/v1/pets`, { method: "HEAD", headers: example.auth });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const anonymous = await fetch(`${example.base}/v1/pets`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("x-ratelimit-limit")).toBe("60");
  });
});
