import { memoryAdapters } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import { createPetstore } from "./app.js";
import { type PetstoreOptions, resolveOptions } from "./options.js";
import type { ApiKeyRecord } from "./ports.js";

const ports: PetstoreOptions = memoryAdapters();
const enterprise: ApiKeyRecord = {
  id: "key_e",
  accountId: "acct_e",
  hash: "0".repeat(64),
  plan: "enterprise",
  perMinute: 7,
  perDay: 70,
  createdAt: 0,
};

describe("resolveOptions", () => {
  it("applies every default of the contract", () => {
    const settings = resolveOptions(ports);
    expect(settings).toMatchObject({
      basePath: "/v1",
      ban: { threshold: 30, seconds: 600 },
      clock: Date.now,
      isTrustedProxy: undefined,
      ietfRateLimitHeaders: true,
      keyCacheMs: 5_000,
      deprecation: { deprecatedAt: Date.UTC(2026, 0, 1), sunsetAt: Date.UTC(2030, 11, 5) },
      onResponse: undefined,
    });
    expect(settings.limitsOf(undefined).windows).toEqual([
      { name: "minute", limit: 60, seconds: 60 },
      { name: "day", limit: 1_000, seconds: 86_400 },
    ]);
    expect(settings.limitsOf(undefined).policy).toBe('"minute";q=60;w=60, "day";q=1000;w=86400');
  });

  it("takes each option over its default, field by field", () => {
    const settings = resolveOptions({
      ...ports,
      basePath: "/api//",
      plans: { free: { perMinute: 5, perDay: 50 } },
      ban: { seconds: 60 },
      trustProxy: ["10.0.0.0/8"],
      ietfRateLimitHeaders: false,
      keyCacheMs: 0,
      deprecation: { sunsetAt: 9 },
    });
    expect(settings).toMatchObject({
      basePath: "/api",
      ban: { threshold: 30, seconds: 60 },
      ietfRateLimitHeaders: false,
      keyCacheMs: 0,
      deprecation: { deprecatedAt: Date.UTC(2026, 0, 1), sunsetAt: 9 },
    });
    expect(settings.limitsOf(undefined).windows.map((w) => w.limit)).toEqual([5, 50]);
    expect(settings.isTrustedProxy?.("10.1.2.3")).toBe(true);
  });

  it("gives an enterprise key its own numbers and its policy header", () => {
    const { limitsOf } = resolveOptions(ports);
    expect(limitsOf(enterprise).windows.map((w) => w.limit)).toEqual([7, 70]);
    expect(limitsOf(enterprise).policy).toBe('"minute";q=7;w=60, "day";q=70;w=86400');
  });

  it("throws on a malformed trustProxy range, so bad configuration fails at start", () => {
    expect(() => resolveOptions({ ...ports, trustProxy: ["10.0.0.0/33"] })).toThrow(TypeError);
  });
});

describe("createPetstore's adapters", () => {
  const FIX =
    "memoryAdapters() gives all four, as do libsqlAdapters(db), postgresAdapters({ sql }) and d1Adapters(env.DB)";
  const { store, keys, limiter, idempotency } = memoryAdapters();

  it("names the ports missing beside those given, and where all four come from", () => {
    expect(() => createPetstore({ store } as unknown as PetstoreOptions)).toThrow(
      new TypeError(`createPetstore needs keys, limiter and idempotency beside store: ${FIX}`),
    );
    expect(() => createPetstore({ store, keys, limiter } as unknown as PetstoreOptions)).toThrow(
      new TypeError(`createPetstore needs idempotency beside store, keys and limiter: ${FIX}`),
    );
  });

  it("says it needs its options when given none", () => {
    expect(() => (createPetstore as (options?: unknown) => unknown)()).toThrow(
      new TypeError(`createPetstore needs an options object with store, keys, limiter and idempotency: ${FIX}`),
    );
  });

  it("names a port that lacks what the pipeline calls", () => {
    expect(() =>
      createPetstore({ store, keys: { ...keys, findByHash: undefined }, limiter, idempotency } as never),
    ).toThrow(
      new TypeError(`createPetstore's keys lacks findByHash: it is not the port createPetstore needs (${FIX})`),
    );
  });
});

describe("basePath", () => {
  const ports = memoryAdapters();
  it.each([
    ["/v1", "/v1"],
    ["/api/petstore/", "/api/petstore"],
    ["", ""],
    ["/", ""],
  ])("takes %j as %j", (given, kept) => {
    expect(resolveOptions({ ...ports, basePath: given }).basePath).toBe(kept);
  });
  it.each(["api/petstore", "v1", "/api//petstore", "/api petstore", "/v1?x=1", "https://x/v1"])(
    "refuses %j with a TypeError that says what a basePath is",
    (given) => {
      expect(() => createPetstore({ ...ports, basePath: given })).toThrow(
        new TypeError(
          `basePath must be "" or a path that starts with "/" (e.g. "/api/petstore"), not ${JSON.stringify(given)}`,
        ),
      );
    },
  );
});
