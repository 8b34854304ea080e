import { describe, expect, it } from "vitest";
import { standardHeaders } from "./standard-headers.js";

describe("standardHeaders", () => {
  it("forbids caching and content sniffing, and names the request", () => {
    expect(standardHeaders("r-1")).toEqual({ "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "X-Request-Id": "r-1" });
  });

  it("makes a new object each time, since the pipeline writes the rate-limit headers into it", () => {
    const first = standardHeaders("r-1");
    first["X-RateLimit-Limit"] = "60";
    expect(standardHeaders("r-1")).not.toHaveProperty("X-RateLimit-Limit");
  });
});
