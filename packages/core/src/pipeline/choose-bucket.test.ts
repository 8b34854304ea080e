import { memoryAdapters } from "@petstore/adapters/memory";
import { afterEach, describe, expect, it, vi } from "vitest";
import { trustedProxies } from "../http/ip-addresses.js";
import { resolveOptions } from "../options.js";
import type { ApiKeyRecord } from "../ports.js";
import { chooseBucketStage } from "./choose-bucket.js";

const pro: ApiKeyRecord = { id: "key_pro", accountId: "acct_pro", hash: "0".repeat(64), plan: "pro", createdAt: 0 };
const settings = resolveOptions(memoryAdapters());
const request = (headers: Record<string, string> = {}) => new Request("http://petstore.test/v1/pets", { headers });

describe("chooseBucketStage", () => {
  it("counts a caller with a key in the key's bucket, with its plan's windows, without reading the client address", () => {
    const info = {
      get clientAddress(): string {
        throw new Error("the address was read");
      },
    };
    const bucket = chooseBucketStage(settings)(request(), info, { caller: pro, keyCache: "miss" });
    expect(bucket).toEqual({ name: "{acct_pro}key:key_pro", client: undefined, limits: settings.limitsOf(pro) });
    expect(bucket.limits.windows).toEqual([
      { name: "minute", limit: 300, seconds: 60 },
      { name: "day", limit: 10_000, seconds: 86_400 },
    ]);
  });

  it("counts a caller without a key by its client address (an IPv6 /64 as one), with the Free plan's windows", () => {
    const bucket = chooseBucketStage(settings)(
      request(),
      { clientAddress: "2001:db8:1:2::99" },
      { caller: undefined, sentKey: false },
    );
    expect(bucket).toMatchObject({
      name: "ip:2001:0db8:0001:0002::/64",
      client: "2001:db8:1:2::99",
      limits: { windows: [{ limit: 60 }, { limit: 1_000 }] },
    });
  });

  describe("a caller without a key and without a client address", () => {
    afterEach(() => vi.restoreAllMocks());
    const anonymous = { caller: undefined, sentKey: false };

    it("shares the bucket ip:unknown, and the host is told once per createPetstore on the console", () => {
      const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
      const choose = chooseBucketStage(settings);
      expect(choose(request(), undefined, anonymous).name).toBe("ip:unknown");
      expect(choose(request(), {}, anonymous).name).toBe("ip:unknown");
      expect(warn).toHaveBeenCalledTimes(1);
      const [line] = warn.mock.calls[0]!;
      expect(line).toMatch(
        /^@petstore\/core: a request without a valid API key came without a client address, .*\(ip:unknown\).* petstore\.fetch\(request, \{ clientAddress \}\)/,
      );
      expect(line).not.toContain("\n");
      chooseBucketStage(settings)(request(), undefined, anonymous);
      expect(warn).toHaveBeenCalledTimes(2);
    });

    it("is not warned about when the address is given, or when the caller has a key", () => {
      const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
      const choose = chooseBucketStage(settings);
      choose(request(), { clientAddress: "192.0.2.1" }, anonymous);
      choose(request(), undefined, { caller: pro, keyCache: "miss" });
      expect(warn).not.toHaveBeenCalled();
    });
  });

  it("believes X-Forwarded-For only from a trusted proxy", () => {
    const choose = chooseBucketStage({ ...settings, isTrustedProxy: trustedProxies(["10.0.0.0/8"]) });
    const anonymous = { caller: undefined, sentKey: false };
    expect(choose(request({ "X-Forwarded-For": "198.51.100.4" }), { clientAddress: "10.0.0.1" }, anonymous).name).toBe(
      "ip:198.51.100.4",
    );
    expect(choose(request({ "X-Forwarded-For": "198.51.100.4" }), { clientAddress: "192.0.2.1" }, anonymous).name).toBe(
      "ip:192.0.2.1",
    );
  });

  it("counts a caller in its account's bucket too, with the account's limits, when the key was read with its account", () => {
    const shop = {
      ...pro,
      id: "key_shop",
      accountId: "acct_shop",
      perMinute: 10,
      account: { plan: "business" as const },
    };
    const bucket = chooseBucketStage(settings)(request(), undefined, { caller: shop, keyCache: "miss" });
    expect(bucket.name).toBe("{acct_shop}key:key_shop");
    expect(bucket.limits.windows[0]!.limit).toBe(10);
    expect(bucket.shared).toEqual([{ name: "{acct_shop}", limits: settings.limitsOf({ plan: "business" }) }]);
    expect(bucket.shared![0]!.limits.windows[0]!.limit).toBe(1_000);
  });
});
