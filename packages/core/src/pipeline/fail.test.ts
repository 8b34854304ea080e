import { memoryAdapters } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import { ApiError, RequestAbortedError, StorageUnavailableError } from "../errors.js";
import { resolveOptions } from "../options.js";
import type { ApiKeyRecord, Decision } from "../ports.js";
import { arrive } from "./arrival.js";
import { failStage } from "./fail.js";

const T0 = Date.UTC(2030, 0, 15, 12, 0, 10);
const pro: ApiKeyRecord = { id: "key_p", accountId: "acct_p", hash: "0".repeat(64), plan: "pro", createdAt: 0 };
const admitted: Decision = {
  allowed: true,
  windows: [{ name: "minute", limit: 300, remaining: 299, resetAt: T0 + 50_000, exceeded: false }],
  now: T0,
};

function setUp() {
  const logged: [unknown, string][] = [];
  const settings = resolveOptions({
    ...memoryAdapters(),
    onError: (error: unknown, requestId: string) => logged.push([error, requestId]),
  });
  const arrival = arrive(new Request("http://petstore.test/v1/pets", { headers: { "X-Request-Id": "r-1" } }), T0, 0);
  const limits = settings.limitsOf(pro);
  return { fail: failStage(settings), arrival, limits, logged };
}

describe("failStage", () => {
  it("answers an ApiError with its Error body, the request id and the decided rate limit", async () => {
    const { fail, arrival, limits, logged } = setUp();
    const { response, error, aborted } = fail(
      new ApiError("not_found", "Pet 9 was not found"),
      arrival,
      limits,
      admitted,
    );
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ code: "not_found", message: "Pet 9 was not found", status: 404 });
    expect([response.headers.get("x-request-id"), response.headers.get("x-ratelimit-remaining")]).toEqual([
      "r-1",
      "299",
    ]);
    expect([error.code, aborted, logged]).toEqual(["not_found", false, []]);
  });

  it("hides an unexpected error behind internal_error and hands it to onError with the request id", async () => {
    const { fail, arrival, limits, logged } = setUp();
    const bug = new Error("SELECT secret FROM keys");
    const { response } = fail(bug, arrival, limits, admitted);
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain("secret");
    expect(logged).toEqual([[bug, "r-1"]]);
  });

  it("sends honest rate-limit headers on a 503 before the limiter decided: the caller's limit, nothing remaining", () => {
    const { fail, arrival, limits } = setUp();
    const { response } = fail(new StorageUnavailableError(), arrival, limits, undefined);
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(response.headers.get("x-ratelimit-limit")).toBe("300");
    expect(response.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(response.headers.get("x-ratelimit-reset")).toBe(String(Math.ceil(T0 / 1000) + 1));
    expect(response.headers.get("ratelimit")).toBe('"minute";r=0;t=1');
  });

  it("reports the Free plan's limit when storage failed before a bucket was chosen (the key lookup)", () => {
    const { fail, arrival } = setUp();
    expect(
      fail(new StorageUnavailableError(), arrival, undefined, undefined).response.headers.get("x-ratelimit-limit"),
    ).toBe("60");
  });

  it("marks a body the client stopped sending as aborted, without calling onError", () => {
    const { fail, arrival, limits, logged } = setUp();
    const failure = fail(new RequestAbortedError(), arrival, limits, admitted);
    expect([failure.response.status, failure.aborted, logged]).toEqual([400, true, []]);
  });
});
