import { memoryAdapters } from "@petstore/adapters/memory";
import { memoryLimiter } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import { resolveOptions } from "../options.js";
import type { ApiKeyRecord, HitInput, RateLimiter } from "../ports.js";
import { trustedProxies } from "./client-address.js";
import { beginExchange } from "./exchange.js";
import { limitStage } from "./limit.js";

const T0 = Date.UTC(2030, 0, 15, 12);
const pro: ApiKeyRecord = { id: "key_pro", hash: "0".repeat(64), plan: "pro", createdAt: 0 };

/** A limiter that records what it was asked. */
function recording(): { limiter: RateLimiter; hits: HitInput[] } {
  const inner = memoryLimiter();
  const hits: HitInput[] = [];
  return { hits, limiter: { hit: (input) => (hits.push(input), inner.hit(input)) } };
}

function exchangeOf(caller: ApiKeyRecord | undefined, address: () => string | undefined, headers: Record<string, string> = {}) {
  const exchange = beginExchange(new Request("http://petstore.test/v1/pets", { headers }), { get clientAddress() { return address(); } }, T0);
  exchange.identity = caller ? { caller, keyCache: "miss" } : { caller: undefined, sentKey: false };
  return exchange;
}

describe("limitStage", () => {
  it("counts a caller with a key in the key's bucket, with its plan's windows, without reading the client address", async () => {
    const { limiter, hits } = recording();
    const limit = limitStage({ ...resolveOptions({ ...memoryAdapters(), limiter }), limiter });
    const exchange = exchangeOf(pro, () => {
      throw new Error("the address was read");
    });
    const decision = await limit(exchange);
    expect(decision.allowed).toBe(true);
    expect(hits).toEqual([{ bucket: "key:key_pro", windows: [{ name: "minute", limit: 300, seconds: 60 }, { name: "day", limit: 10_000, seconds: 86_400 }], ban: { threshold: 30, seconds: 600 }, now: T0 }]);
    expect(exchange.client).toBeUndefined();
  });

  it("counts a caller without a key by its client address (an IPv6 /64 as one), with the Free plan's windows", async () => {
    const { limiter, hits } = recording();
    const limit = limitStage({ ...resolveOptions({ ...memoryAdapters(), limiter }), limiter });
    const exchange = exchangeOf(undefined, () => "2001:db8:1:2::99");
    await limit(exchange);
    expect(exchange.client).toBe("2001:db8:1:2::99");
    expect(hits[0]).toMatchObject({ bucket: "ip:2001:0db8:0001:0002::/64", windows: [{ limit: 60 }, { limit: 1_000 }] });
  });

  it("believes X-Forwarded-For only from a trusted proxy", async () => {
    const { limiter, hits } = recording();
    const limit = limitStage({ ...resolveOptions({ ...memoryAdapters(), limiter }), limiter, isTrustedProxy: trustedProxies(["10.0.0.0/8"]) });
    await limit(exchangeOf(undefined, () => "10.0.0.1", { "X-Forwarded-For": "198.51.100.4" }));
    await limit(exchangeOf(undefined, () => "192.0.2.1", { "X-Forwarded-For": "198.51.100.4" }));
    expect(hits.map((hit) => hit.bucket)).toEqual(["ip:198.51.100.4", "ip:192.0.2.1"]);
  });
});
