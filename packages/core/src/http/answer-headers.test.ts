import { memoryAdapters } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import { resolveOptions } from "../options.js";
import type { Decision } from "../ports.js";
import { admittedHeaders, answerHeaders, responseWith, sharedHeaders, standardHeaders } from "./answer-headers.js";

const T0 = Date.UTC(2030, 0, 15, 12, 0, 10);
const MINUTE_END = Date.UTC(2030, 0, 15, 12, 1);
const DAY_END = Date.UTC(2030, 0, 16);
const free = resolveOptions(memoryAdapters()).limitsOf(undefined);

const decision = (allowed: boolean, remaining: [number, number], bannedUntil?: number): Decision => ({
  allowed,
  windows: [
    {
      name: "minute",
      limit: 60,
      remaining: remaining[0],
      resetAt: MINUTE_END,
      exceeded: !allowed && remaining[0] === 0,
    },
    { name: "day", limit: 1000, remaining: remaining[1], resetAt: DAY_END, exceeded: false },
  ],
  ...(bannedUntil === undefined ? {} : { bannedUntil }),
  now: T0,
});

describe("standardHeaders", () => {
  it("forbids caching and content sniffing, and names the request, in a new object each time", () => {
    expect(standardHeaders("r-1")).toEqual({
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
      "X-Request-Id": "r-1",
    });
    expect(standardHeaders("r-1")).not.toBe(standardHeaders("r-1"));
  });
});

describe("answerHeaders", () => {
  it("describes an admitted request by the window with the fewest requests left", () => {
    const headers = answerHeaders("r-1", { limits: free, decision: decision(true, [59, 999]) }, true);
    expect(headers).toEqual({
      ...standardHeaders("r-1"),
      "Content-Type": "application/json",
      "X-RateLimit-Limit": "60",
      "X-RateLimit-Remaining": "59",
      "X-RateLimit-Reset": String(MINUTE_END / 1000),
      "RateLimit-Policy": '"minute";q=60;w=60, "day";q=1000;w=86400',
      RateLimit: '"minute";r=59;t=50',
    });
  });

  it("adds Retry-After to a refusal: the window's reset, or the ban's end", () => {
    expect(answerHeaders("r-1", { limits: free, decision: decision(false, [0, 900]) }, true)["Retry-After"]).toBe("50");
    const banned = answerHeaders("r-1", { limits: free, decision: decision(false, [0, 900], T0 + 600_000) }, true);
    expect([banned["Retry-After"], banned["X-RateLimit-Remaining"], banned.RateLimit]).toEqual([
      "600",
      "0",
      '"minute";r=0;t=600',
    ]);
  });

  it("sends honest values when the limiter could not decide: the limit, nothing remaining, the answer's Retry-After", () => {
    const headers = answerHeaders("r-1", { limits: free, decision: undefined, retryAfter: "1", now: T0 }, true);
    expect(headers).toMatchObject({
      "X-RateLimit-Limit": "60",
      "X-RateLimit-Remaining": "0",
      "X-RateLimit-Reset": String(Math.ceil(T0 / 1000) + 1),
      RateLimit: '"minute";r=0;t=1',
    });
    expect(headers).not.toHaveProperty("Retry-After");
  });

  it("counts Retry-After and the IETF header's seconds from the instant the limiter decided at", () => {
    const later = { ...decision(false, [0, 900]), now: T0 + 20_000 };
    const headers = answerHeaders("r-1", { limits: free, decision: later }, true);
    expect([headers["Retry-After"], headers.RateLimit, headers["X-RateLimit-Reset"]]).toEqual([
      "30",
      '"minute";r=0;t=30',
      String(MINUTE_END / 1000),
    ]);
  });

  it("sends no IETF headers when they are turned off", () => {
    const headers = answerHeaders("r-1", { limits: free, decision: decision(true, [59, 999]) }, false);
    expect(Object.keys(headers)).not.toContain("RateLimit");
    expect(Object.keys(headers)).not.toContain("RateLimit-Policy");
  });
});

const lowerCased = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

describe("admittedHeaders and responseWith", () => {
  it("answer with exactly the headers answerHeaders makes, the IETF ones on or off", () => {
    for (const ietf of [true, false]) {
      for (const admitted of [
        decision(true, [59, 999]),
        decision(false, [0, 900]),
        decision(false, [0, 900], T0 + 600_000),
      ]) {
        const response = responseWith("{}", 200, admittedHeaders("r-1", free, admitted, sharedHeaders(ietf), ietf));
        expect(Object.fromEntries(response.headers)).toEqual(
          lowerCased(answerHeaders("r-1", { limits: free, decision: admitted }, ietf)),
        );
      }
    }
  });

  it("share one Headers per limits and window until the window resets, which no answer changes", () => {
    const shared = sharedHeaders(true);
    const first = admittedHeaders("r-1", free, decision(true, [59, 999]), shared, true);
    expect(admittedHeaders("r-2", free, decision(true, [58, 998]), shared, true).shared).toBe(first.shared);
    const before = [...first.shared];
    const response = responseWith("text", 201, first, { "Content-Type": "text/plain", Location: "/v1/pets/1" });
    expect([response.headers.get("content-type"), response.headers.get("location")]).toEqual([
      "text/plain",
      "/v1/pets/1",
    ]);
    expect([...first.shared]).toEqual(before);
    // The next minute: its reset, in a Headers of its own.
    const next = decision(true, [59, 997]);
    next.windows[0]!.resetAt = MINUTE_END + 60_000;
    const later = responseWith("{}", 200, admittedHeaders("r-3", free, next, shared, true));
    expect([later.headers.get("x-ratelimit-reset"), later.headers.get("location")]).toEqual([
      String(MINUTE_END / 1000 + 60),
      null,
    ]);
  });
});
