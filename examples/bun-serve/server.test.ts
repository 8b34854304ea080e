import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, type ServedExample, startServerExample } from "../_support/start-example.js";

describe("the bun-serve example", () => {
  let example: ServedExample;
  beforeAll(async () => {
    example = await startServerExample("examples/bun-serve/server.ts");
  });
  afterAll(() => example?.stop());

  it("serves authenticated requests with the key it prints", async () => {
    const { key } = example;
    const created = await fetch(`${example.base}/v1/pets`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    const listed = await fetch(`${example.base}/v1/pets`, { headers: { Authorization: `Bearer ${key}` } });
    expect(await listed.json()).toEqual([{ id: 1, name: "Rex", categoryId: 1 }]);
    expect(listed.headers.get("x-ratelimit-remaining")).toBe("58");
  });

  it("rate-limits anonymous callers by their socket address", async () => {
    const response = await fetch(`${example.base}/v1/pets`);
    expect(response.status).toBe(401);
    expect(response.headers.get("x-ratelimit-limit")).toBe("60");
  });

  it("is the snippet docs/library.md shows, word for word", () => {
    const readme = readFileSync(`${ROOT}docs/library.md`, "utf8");
    expect(readme).toContain(readFileSync(`${ROOT}examples/bun-serve/server.ts`, "utf8"));
  });
});
