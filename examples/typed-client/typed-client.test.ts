import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { memoryAdapters } from "@petstore/adapters/memory";
import { createPetstore, issueApiKey } from "@petstore/core";
import createClient from "openapi-fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, type ServedExample, startServerExample } from "../_support/start-example.js";
import { generateTypes } from "./generate-types.js";
import { idempotentCreates } from "./idempotent-creates.js";
import type { paths } from "./schema.js";

describe("the typed-client example", () => {
  it("has types that match the live OpenAPI document (regenerate with generate.ts)", async () => {
    const committed = readFileSync(new URL("./schema.d.ts", import.meta.url), "utf8");
    expect(await generateTypes(), "schema.d.ts drifted: run examples/typed-client/generate.ts").toBe(committed);
  });

  describe("against a running server", () => {
    let server: ServedExample;
    beforeAll(async () => {
      server = await startServerExample("examples/bun-serve/server.ts");
    });
    afterAll(() => server?.stop());

    it("creates and lists pets", async () => {
      const env = {
        ...process.env,
        PETSTORE_URL: `${server.base}/v1`,
        PETSTORE_API_KEY: server.key,
      };
      const run = await promisify(execFile)(`${BIN}/bun`, ["examples/typed-client/example.ts"], {
        env,
        timeout: 10_000,
      });
      expect(run.stdout).toBe("Created pet 1 at /v1/pets/1\nAvailable: Rex\n");
    });
  });

  describe("in process, through openapi-fetch's fetch option", () => {
    async function typedClient() {
      const adapters = memoryAdapters({ seed: { pets: [{ name: "Rex", categoryId: 1, status: "sold" }] } });
      const petstore = createPetstore(adapters);
      const { key } = await issueApiKey(adapters.keys, { plan: "free" });
      return createClient<paths>({
        baseUrl: "http://petstore.test/v1",
        headers: { Authorization: `Bearer ${key}` },
        fetch: (request) => petstore.fetch(request),
      });
    }

    it("reads a pet through the deprecated getPet, with its deprecation headers", async () => {
      const client = await typedClient();
      const { data, response } = await client.GET("/pets/{petId}", { params: { path: { petId: 1 } } });
      expect(data).toEqual({ id: 1, name: "Rex", categoryId: 1, status: "sold" });
      expect(response.headers.get("sunset")).toBe("Thu, 05 Dec 2030 00:00:00 GMT");
    });

    it("gets the typed Error body for what the types already reject", async () => {
      const client = await typedClient();
      // @ts-expect-error "lost" is not a PetStatus: the generated types refuse it as the server does
      const { error, response } = await client.GET("/pets", { params: { query: { status: "lost" } } });
      expect(response.status).toBe(400);
      expect(error).toMatchObject({ code: "invalid_parameter", status: 400 });
    });

    it("sends an Idempotency-Key with every create by itself, and keeps one it is given", async () => {
      const adapters = memoryAdapters();
      const petstore = createPetstore(adapters);
      const { key } = await issueApiKey(adapters.keys, { plan: "free" });
      const sent: (string | null)[] = [];
      const client = createClient<paths>({
        baseUrl: "http://petstore.test/v1",
        headers: { Authorization: `Bearer ${key}` },
        fetch: (request) => {
          sent.push(request.headers.get("idempotency-key"));
          return petstore.fetch(request);
        },
      });
      client.use(idempotentCreates);
      await client.POST("/pets", { body: { name: "Rex", categoryId: 1 } });
      await client.POST("/pets", { body: { name: "Fido", categoryId: 1 }, headers: { "Idempotency-Key": "order-7" } });
      await client.GET("/pets");
      expect(sent[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(sent.slice(1)).toEqual(["order-7", null]);
    });
  });
});
