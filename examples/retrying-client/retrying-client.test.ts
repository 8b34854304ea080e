import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import { promisify } from "node:util";
import { getRequestListener } from "@hono/node-server";
import { memoryAdapters } from "@petstore/adapters/memory";
import { createPetstore, issueApiKey } from "@petstore/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

interface Seen {
  status: number;
  retryAfter: string | null;
  idempotencyKey: string | null;
  /** performance.now() when the answer was ready. */
  at: number;
}

describe("the retrying-client example", () => {
  // The server's clock is shifted so that the client's first request lands 2 s before a
  // minute boundary: Retry-After is then about 2 s instead of up to 60 s. The server still
  // sends it and the client still waits it in real time; only the minute's phase is chosen.
  let shift: number | undefined;
  const clock = () => {
    const now = Date.now();
    shift ??= 58_000 - (now % 60_000);
    return now + shift;
  };
  const adapters = memoryAdapters({ clock });
  const seen: Seen[] = [];
  let server: Server;
  let url: string;
  let key: string;

  beforeAll(async () => {
    const petstore = createPetstore({ ...adapters, plans: { free: { perMinute: 3, perDay: 1_000 } } });
    ({ key } = await issueApiKey(adapters.keys, { plan: "free" }));
    server = createServer(
      getRequestListener(async (request, { incoming }) => {
        const response = await petstore.fetch(request, { clientAddress: incoming.socket.remoteAddress });
        const { status, headers } = response;
        seen.push({
          status,
          retryAfter: headers.get("retry-after"),
          idempotencyKey: request.headers.get("idempotency-key"),
          at: performance.now(),
        });
        return response;
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  });
  afterAll(() => {
    server?.closeAllConnections();
    server?.close();
  });

  it("hits the limit, waits the Retry-After it was given, and creates every pet exactly once", async () => {
    const env = { ...process.env, PETSTORE_URL: url, PETSTORE_API_KEY: key, COUNT: "5" };
    const run = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "examples/retrying-client/add-pets.ts"],
      {
        env,
        timeout: 15_000,
      },
    );

    expect(seen.map((s) => s.status)).toEqual([201, 201, 201, 429, 201, 201]);
    const refused = seen[3]!;
    const retried = seen[4]!;
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(retried.at - refused.at).toBeGreaterThanOrEqual(Number(refused.retryAfter) * 1000);
    expect(retried.idempotencyKey).toBe(refused.idempotencyKey);
    expect(run.stdout).toContain(`retry 1 after 429, having waited Retry-After: ${refused.retryAfter} s`);

    const pets = await adapters.store.listPets({ limit: 100 });
    expect(pets.map((pet) => pet.name)).toEqual(["Pet 1", "Pet 2", "Pet 3", "Pet 4", "Pet 5"]);
  });

  it("gives every create an Idempotency-Key by itself, the same on its retries, and keeps one it is given", async () => {
    const { petstoreClient } = await import("./client.js");
    // A key of its own, far from its limit: the first test used up the Free key's minute.
    const client = petstoreClient(url, (await issueApiKey(adapters.keys, { plan: "pro" })).key);
    const before = seen.length;
    await client.post("pets", { json: { name: "Plain", categoryId: 1 } }).json();
    await client
      .post("pets", { json: { name: "Given", categoryId: 1 }, headers: { "Idempotency-Key": "order-7" } })
      .json();
    const keys = seen.slice(before).map((s) => s.idempotencyKey);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys.at(-1)).toBe("order-7");
  });
});
