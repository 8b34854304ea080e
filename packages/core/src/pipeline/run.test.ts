import { memoryAdapters } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import type { Context, Handler } from "../context.js";
import { resolveOptions } from "../options.js";
import type { ApiKeyRecord } from "../ports.js";
import { beginExchange } from "./exchange.js";
import { runStage } from "./run.js";

const caller: ApiKeyRecord = { id: "key_a", hash: "0".repeat(64), plan: "free", createdAt: 0 };

describe("runStage", () => {
  it("runs the handler with the request and a context of the stores, params, caller, time and headers so far", async () => {
    const adapters = memoryAdapters();
    const settings = resolveOptions({ ...adapters, basePath: "/api/", deprecation: { sunsetAt: 5 } });
    const exchange = beginExchange(new Request("http://petstore.test/api/pets/3"), undefined, 1_234);
    let seen: { request: Request; ctx: Context } | undefined;
    const handler: Handler = async (request, ctx) => {
      seen = { request, ctx };
      return new Response("ran", { status: 299 });
    };
    const response = await runStage(settings)({ handler, params: { petId: "3" } }, exchange, caller);
    expect(response.status).toBe(299);
    expect(seen?.request).toBe(exchange.request);
    expect(seen?.ctx).toEqual({
      // The store behind core's page cache (see cachePetPages).
      store: settings.store,
      idempotency: adapters.idempotency,
      params: { petId: "3" },
      caller,
      now: 1_234,
      basePath: "/api",
      deprecation: { deprecatedAt: Date.UTC(2026, 0, 1), sunsetAt: 5 },
      headers: exchange.headers,
    });
  });

  it("leaves the caller out of the context on a public route", async () => {
    const exchange = beginExchange(new Request("http://petstore.test/v1/openapi.json"), undefined, 0);
    let ctx: Context | undefined;
    const handler: Handler = async (_request, c) => ((ctx = c), new Response());
    await runStage(resolveOptions(memoryAdapters()))({ handler, params: {} }, exchange, undefined);
    expect(ctx).not.toHaveProperty("caller");
  });
});
