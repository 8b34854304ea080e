import { describe, expect, it } from "vitest";
import { beginExchange } from "./exchange.js";

describe("beginExchange", () => {
  it("reads the request id and the path, and starts the headers every answer carries", () => {
    const request = new Request("http://petstore.test/v1/pets?limit=2", { headers: { "X-Request-Id": "abc-1" } });
    const exchange = beginExchange(request, { clientAddress: "203.0.113.7" }, 1_000);
    expect(exchange).toMatchObject({ request, requestId: "abc-1", pathname: "/v1/pets", now: 1_000, banStarted: false, aborted: false });
    expect(exchange.headers).toEqual({ "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "X-Request-Id": "abc-1" });
  });

  it("gives each exchange headers of its own, which later stages write into", () => {
    const request = new Request("http://petstore.test/v1/pets");
    const first = beginExchange(request, undefined, 0);
    first.headers["X-RateLimit-Limit"] = "60";
    expect(beginExchange(request, undefined, 0).headers).not.toHaveProperty("X-RateLimit-Limit");
  });

  it("does not read the client address: a host may look it up only when a stage needs it", () => {
    let reads = 0;
    const info = {
      get clientAddress() {
        reads++;
        return "203.0.113.7";
      },
    };
    beginExchange(new Request("http://petstore.test/v1/pets"), info, 0);
    expect(reads).toBe(0);
  });
});
