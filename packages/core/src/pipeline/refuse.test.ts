import { describe, expect, it } from "vitest";
import type { Decision } from "../ports.js";
import { refuse } from "./refuse.js";

const T0 = Date.UTC(2030, 0, 15, 12, 0, 10);
const MINUTE_END = Date.UTC(2030, 0, 15, 12, 1);

const decision = (allowed: boolean, bannedUntil?: number): Decision => ({
  allowed,
  windows: [{ name: "minute", limit: 60, remaining: allowed ? 59 : 0, resetAt: MINUTE_END, exceeded: !allowed }],
  ...(bannedUntil === undefined ? {} : { bannedUntil }),
  now: T0,
});

describe("refuse", () => {
  it("lets an admitted request through", () => {
    expect(() => refuse(decision(true))).not.toThrow();
  });

  it("refuses a request over a limit with 429 rate_limited, saying when to retry", () => {
    expect(() => refuse(decision(false))).toThrow(
      expect.objectContaining({ status: 429, code: "rate_limited", message: "Rate limit exceeded; retry after 50 s" }),
    );
  });

  it("refuses a banned bucket with 429 temporarily_banned until the ban ends", () => {
    expect(() => refuse(decision(false, T0 + 600_000))).toThrow(
      expect.objectContaining({
        status: 429,
        code: "temporarily_banned",
        message: "Temporarily banned after repeated requests over the limit; retry after 600 s",
      }),
    );
  });
});
