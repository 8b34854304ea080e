import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServedExample, startServerExample } from "./start-example.js";

/**
 * The tests of an example that mounts the Pet Store under /v1 in an existing app with routes
 * of its own (`hono-mount`, `itty-mount`): the app's routes still answer, the API answers
 * under /v1, and paths outside both get the app's own 404, which `expectAppNotFound` checks.
 */
export function mountedAppSuite(example: string, expectAppNotFound: (response: Response) => Promise<void>): void {
  describe(`the ${example} example`, () => {
    let served: ServedExample;
    beforeAll(async () => {
      served = await startServerExample(`examples/${example}/server.ts`);
    });
    afterAll(() => served?.stop());

    it("keeps serving the app's own routes", async () => {
      const home = await fetch(`${served.base}/`);
      expect(await home.text()).toBe("Welcome to the shop");
      const health = await fetch(`${served.base}/health`);
      expect(await health.json()).toEqual({ ok: true });
      expect(health.headers.get("x-ratelimit-limit")).toBeNull();
    });

    it("serves the Pet Store under /v1 to a caller with a key", async () => {
      const created = await fetch(`${served.base}/v1/pets`, {
        method: "POST",
        headers: { ...served.auth, "Content-Type": "application/json" },
        body: JSON.stringify({ name: "Rex", categoryId: 1, status: "available" }),
      });
      expect(created.status).toBe(201);
      expect(created.headers.get("location")).toBe("/v1/pets/1");
      const listed = await fetch(`${served.base}/v1/pets?status=available`, { headers: served.auth });
      expect(await listed.json()).toEqual([{ id: 1, name: "Rex", categoryId: 1, status: "available" }]);
      expect(listed.headers.get("x-ratelimit-remaining")).toBe("58");
    });

    it("answers a caller without a key with 401, counted against its address", async () => {
      const response = await fetch(`${served.base}/v1/pets`);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toBe('Bearer realm="petstore"');
      expect(response.headers.get("x-ratelimit-remaining")).toBe("59");
    });

    it("leaves paths outside /v1 to the app", async () => {
      const response = await fetch(`${served.base}/pets`, { headers: served.auth });
      expect(response.status).toBe(404);
      await expectAppNotFound(response);
    });
  });
}
