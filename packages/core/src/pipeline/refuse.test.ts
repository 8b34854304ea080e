import { memoryAdapters } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import { resolveOptions } from "../options.js";
import type { Decision } from "../ports.js";
import { beginExchange } from "./exchange.js";
import { refuseStage } from "./refuse.js";

const T0 = Date.UTC(2030, 0, 15, 12, 0, 10);
const MINUTE_END = Date.UTC(2030, 0, 15, 12, 1);
const DAY_END = Date.UTC(2030, 0, 16);
const settings = resolveOptions(memoryAdapters());

function exchange() {
  const begun = beginExchange(new Request("http://petstore.test/v1/pets"), undefined, T0);
  begun.bucket = "key:key_a";
  begun.limits = settings.limitsOf(undefined);
  return begun;
}

const decision = (allowed: boolean, remaining: [number, number], bannedUntil?: number): Decision => ({
  allowed,
  windows: [
    { name: "minute", limit: 60, remaining: remaining[0], resetAt: MINUTE_END, exceeded: !allowed && remaining[0] === 0 },
    { name: "day", limit: 1000, remaining: remaining[1], resetAt: DAY_END, exceeded: false },
  ],
  ...(bannedUntil === undefined ? {} : { bannedUntil }),
});

const refusal = (code: string) => expect.objectContaining({ status: 429, code });

describe("refuseStage", () => {
  it("lets an admitted request through, with the binding window's headers", () => {
    const refuse = refuseStage(settings);
    const admitted = exchange();
    refuse(admitted, decision(true, [59, 999]));
    expect(admitted.headers).toMatchObject({ "X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "59", "X-RateLimit-Reset": String(MINUTE_END / 1000), RateLimit: '"minute";r=59;t=50' });
    expect(admitted.headers).not.toHaveProperty("Retry-After");
  });

  it("refuses a request over a limit with 429 rate_limited and Retry-After", () => {
    const refused = exchange();
    expect(() => refuseStage(settings)(refused, decision(false, [0, 900]))).toThrow(refusal("rate_limited"));
    expect(refused.headers["Retry-After"]).toBe("50");
    expect(refused.banStarted).toBe(false);
  });

  it("refuses a banned bucket with 429 temporarily_banned, and marks only the refusal that began the ban", () => {
    const refuse = refuseStage(settings);
    const bannedUntil = T0 + 600_000;
    const first = exchange();
    expect(() => refuse(first, decision(false, [0, 900], bannedUntil))).toThrow(refusal("temporarily_banned"));
    expect(first.banStarted).toBe(true);
    expect(first.headers["Retry-After"]).toBe("600");
    const again = exchange();
    expect(() => refuse(again, decision(false, [0, 900], bannedUntil))).toThrow(refusal("temporarily_banned"));
    expect(again.banStarted).toBe(false);
  });

  it("sends no IETF headers when they are turned off", () => {
    const quiet = exchange();
    refuseStage({ ...settings, ietfRateLimitHeaders: false })(quiet, decision(true, [59, 999]));
    expect(Object.keys(quiet.headers)).not.toContain("RateLimit");
    expect(Object.keys(quiet.headers)).not.toContain("RateLimit-Policy");
  });
});
