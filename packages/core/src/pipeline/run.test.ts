import { memoryAdapters } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import type { Context, Handler } from "../context.js";
import { resolveOptions } from "../options.js";
import type { ApiKeyRecord, Decision } from "../ports.js";
import { answerHeaders, responseWith } from "../http/answer-headers.js";
import { arrive } from "./arrival.js";
import { runStage } from "./run.js";

const caller: ApiKeyRecord = { id: "key_a", accountId: "acct_a", hash: "0".repeat(64), plan: "free", createdAt: 0 };
const admitted: Decision = {
  allowed: true,
  windows: [{ name: "minute", limit: 60, remaining: 59, resetAt: 60_000, exceeded: false }],
  now: 1_234,
};

const lowerCased = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

describe("runStage", () => {
  it("runs the handler with the request and a context of the stores, params, caller, time and the answer's headers", async () => {
    const adapters = memoryAdapters();
    const settings = resolveOptions({ ...adapters, basePath: "/api/", deprecation: { sunsetAt: 5 } });
    const request = new Request("http://petstore.test/api/pets/3", { headers: { "X-Request-Id": "r-3" } });
    const limits = settings.limitsOf(caller);
    let seen: { request: Request; ctx: Context } | undefined;
    const handler: Handler = async (request, ctx) => {
      seen = { request, ctx };
      return new Response("ran", { status: 299 });
    };
    const response = await runStage(settings)(
      { handler, params: { petId: "3" } },
      request,
      caller,
      arrive(request, 999, 0),
      limits,
      admitted,
    );
    expect(response.status).toBe(299);
    expect(seen?.request).toBe(request);
    const { headers, ...rest } = seen!.ctx;
    expect(rest).toEqual({
      store: adapters.store,
      petPages: settings.petPages,
      idempotency: adapters.idempotency,
      params: { petId: "3" },
      caller,
      now: 1_234,
      basePath: "/api",
      deprecation: { deprecatedAt: Date.UTC(2026, 0, 1), sunsetAt: 5 },
      bodyTimeoutMs: 30_000,
    });
    // The answer's headers, as every answer of an admitted request carries them.
    expect(Object.fromEntries(responseWith("{}", 200, headers).headers)).toEqual(
      lowerCased(answerHeaders("r-3", { limits, decision: admitted }, true)),
    );
  });

  it("leaves the caller out of the context on a public route", async () => {
    const settings = resolveOptions(memoryAdapters());
    const request = new Request("http://petstore.test/v1/openapi.json");
    let ctx: Context | undefined;
    const handler: Handler = async (_request, c) => {
      ctx = c;
      return new Response();
    };
    await runStage(settings)(
      { handler, params: {} },
      request,
      undefined,
      arrive(request, 0, 0),
      settings.limitsOf(undefined),
      admitted,
    );
    expect(ctx).not.toHaveProperty("caller");
  });
});
