import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type RunningExample, startExample } from "../_support/start-example.js";

describe("the node-http example", () => {
  let example: RunningExample;
  let base: string;
  let auth: { Authorization: string };
  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // node itself (not npx), so that stop() kills the server's own PID.
    const args = ["--conditions=@petstore/source", "--import", "tsx", "examples/node-http/server.ts"];
    example = await startExample(process.execPath, args, { ready: /curl .*\n/, env: { PORT: String(port) } });
    auth = { Authorization: `Bearer ${/Bearer (psk_\w+)/.exec(example.output())![1]}` };
  });
  afterAll(() => example?.stop());

  it("serves authenticated requests through Node's http server", async () => {
    const created = await fetch(`${base}/v1/pets`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toEqual({ id: 1, name: "Rex", categoryId: 1 });
    const listed = await fetch(`${base}/v1/pets`, { headers: { ...auth, "X-Request-Id": "node-http-1" } });
    expect(await listed.json()).toEqual([{ id: 1, name: "Rex", categoryId: 1 }]);
    expect(listed.headers.get("x-request-id")).toBe("node-http-1");
    expect(listed.headers.get("x-ratelimit-remaining")).toBe("58");
  });

  it("answers HEAD without a body and a caller without a key with 401", async () => {
    const head = await fetch(`${base}/v1/pets`, { method: "HEAD", headers: auth });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const anonymous = await fetch(`${base}/v1/pets`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("x-ratelimit-limit")).toBe("60");
  });
});
