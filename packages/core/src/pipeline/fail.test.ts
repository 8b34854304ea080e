import { memoryAdapters } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import { ApiError, RequestAbortedError, StorageUnavailableError } from "../errors.js";
import { resolveOptions } from "../options.js";
import type { ApiKeyRecord } from "../ports.js";
import { beginExchange } from "./exchange.js";
import { failStage } from "./fail.js";

const T0 = Date.UTC(2030, 0, 15, 12, 0, 10);
const pro: ApiKeyRecord = { id: "key_p", hash: "0".repeat(64), plan: "pro", createdAt: 0 };

function setUp() {
  const logged: [unknown, string][] = [];
  const fail = failStage(resolveOptions({ ...memoryAdapters(), onError: (error: unknown, requestId: string) => logged.push([error, requestId]) }));
  const exchange = beginExchange(new Request("http://petstore.test/v1/pets", { headers: { "X-Request-Id": "r-1" } }), undefined, T0);
  return { fail, exchange, logged };
}

describe("failStage", () => {
  it("answers an ApiError with its Error body and the headers gathered so far", async () => {
    const { fail, exchange, logged } = setUp();
    exchange.headers["X-RateLimit-Limit"] = "60";
    const response = fail(exchange, new ApiError("not_found", "Pet 9 was not found"));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ code: "not_found", message: "Pet 9 was not found", status: 404 });
    expect(response.headers.get("x-request-id")).toBe("r-1");
    expect(response.headers.get("x-ratelimit-limit")).toBe("60");
    expect(exchange.errorCode).toBe("not_found");
    expect(logged).toEqual([]);
  });

  it("hides an unexpected error behind internal_error and hands it to onError with the request id", async () => {
    const { fail, exchange, logged } = setUp();
    const bug = new Error("SELECT secret FROM keys");
    const response = fail(exchange, bug);
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain("secret");
    expect(logged).toEqual([[bug, "r-1"]]);
  });

  it("sends honest rate-limit headers on a 503 before the limiter decided: the caller's limit, nothing remaining", async () => {
    const { fail, exchange } = setUp();
    exchange.identity = { caller: pro, keyCache: "miss" };
    const response = fail(exchange, new StorageUnavailableError());
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(response.headers.get("x-ratelimit-limit")).toBe("300");
    expect(response.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(response.headers.get("x-ratelimit-reset")).toBe(String(Math.ceil(T0 / 1000) + 1));
    expect(response.headers.get("ratelimit")).toBe('"minute";r=0;t=1');
  });

  it("marks a body the client stopped sending as aborted, without calling onError", () => {
    const { fail, exchange, logged } = setUp();
    expect(fail(exchange, new RequestAbortedError()).status).toBe(400);
    expect(exchange.aborted).toBe(true);
    expect(logged).toEqual([]);
  });
});
