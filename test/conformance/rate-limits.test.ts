import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ADAPTER_KITS, errorBody, openWorld, T0, type World } from "./harness.js";

const NEXT_MINUTE = Date.UTC(2026, 10, 21, 12, 1, 0);
const NEXT_MIDNIGHT = Date.UTC(2026, 10, 22);
const seconds = (ms: number) => String(ms / 1000);

function limits(response: Response) {
  return {
    limit: response.headers.get("x-ratelimit-limit"),
    remaining: response.headers.get("x-ratelimit-remaining"),
    reset: response.headers.get("x-ratelimit-reset"),
  };
}

describe.each(ADAPTER_KITS)("rate limits on $name", (kit) => {
  let world: World;
  beforeEach(async () => {
    world = await openWorld(kit);
  });
  afterEach(() => world.close());

  async function spend(key: string, count: number) {
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) statuses.push((await world.call("GET", "/v1/pets", { key })).status);
    return statuses;
  }

  it("reports the Free plan's minute window: limit 60, remaining after this request, reset at the next whole minute", async () => {
    const key = await world.key();
    expect(limits(await world.call("GET", "/v1/pets", { key }))).toEqual({
      limit: "60",
      remaining: "59",
      reset: seconds(NEXT_MINUTE),
    });
    expect(limits(await world.call("GET", "/v1/pets", { key }))).toMatchObject({ remaining: "58" });
  });

  it.each([
    ["pro", "300"],
    ["business", "1000"],
  ] as const)("gives the %s plan %s requests per minute", async (plan, limit) => {
    const key = await world.key({ plan });
    expect(limits(await world.call("GET", "/v1/pets", { key })).limit).toBe(limit);
  });

  it("gives an enterprise key the numbers set when it was created", async () => {
    const key = await world.key({ plan: "enterprise", perMinute: 5000, perDay: 2_000_000 });
    expect(limits(await world.call("GET", "/v1/pets", { key }))).toMatchObject({ limit: "5000", remaining: "4999" });
  });

  it("takes plan numbers from configuration", async () => {
    const custom = await openWorld(kit, { plans: { free: { perMinute: 7, perDay: 70 } } });
    const key = await custom.key();
    expect(limits(await custom.call("GET", "/v1/pets", { key })).limit).toBe("7");
    await custom.close();
  });

  it("refuses the 61st request of a minute with 429 rate_limited, Retry-After until the next minute, and the refusing window's headers", async () => {
    const key = await world.key();
    expect((await spend(key, 60)).every((s) => s === 200)).toBe(true);
    world.clock.now = T0 + 20_000;
    const refused = await world.call("GET", "/v1/pets", { key });
    expect(limits(refused)).toEqual({ limit: "60", remaining: "0", reset: seconds(NEXT_MINUTE) });
    expect(refused.headers.get("retry-after")).toBe("30");
    await errorBody(refused, 429, "rate_limited");
  });

  it("consumes nothing with a refused request", async () => {
    const key = await world.key({ plan: "free", perMinute: 2, perDay: 10 });
    await spend(key, 2);
    expect(await spend(key, 3)).toEqual([429, 429, 429]);
    world.clock.now = NEXT_MINUTE;
    // Two admitted before, none of the three refusals counted: 10 - 2 - 1 left of the day.
    const response = await world.call("GET", "/v1/pets", { key });
    expect(response.status).toBe(200);
    expect(limits(response)).toEqual({ limit: "2", remaining: "1", reset: seconds(NEXT_MINUTE + 60_000) });
    world.clock.now = NEXT_MINUTE + 1;
    await spend(key, 1);
    const day = await world.call("GET", "/v1/pets", { key });
    expect(day.status).toBe(429);
  });

  it("admits again once the minute window resets", async () => {
    const key = await world.key();
    await spend(key, 61);
    world.clock.now = NEXT_MINUTE;
    const response = await world.call("GET", "/v1/pets", { key });
    expect(response.status).toBe(200);
    expect(limits(response)).toEqual({ limit: "60", remaining: "59", reset: seconds(NEXT_MINUTE + 60_000) });
  });

  it("reports the day window when it has fewer requests left, with reset at the next UTC midnight", async () => {
    const key = await world.key({ plan: "free", perMinute: 60, perDay: 30 });
    const response = await world.call("GET", "/v1/pets", { key });
    expect(limits(response)).toEqual({ limit: "30", remaining: "29", reset: seconds(NEXT_MIDNIGHT) });
    expect(response.headers.get("ratelimit")).toBe(`"day";r=29;t=${(NEXT_MIDNIGHT - T0) / 1000}`);
  });

  it("on a tie of remaining, reports the window that resets later", async () => {
    const key = await world.key({ plan: "free", perMinute: 5, perDay: 5 });
    expect(limits(await world.call("GET", "/v1/pets", { key }))).toEqual({
      limit: "5",
      remaining: "4",
      reset: seconds(NEXT_MIDNIGHT),
    });
  });

  it("refuses over the day limit across minutes, with Retry-After until midnight", async () => {
    const key = await world.key({ plan: "free", perMinute: 10, perDay: 12 });
    await spend(key, 10);
    world.clock.now = NEXT_MINUTE;
    await spend(key, 2);
    world.clock.now = NEXT_MINUTE + 30_000;
    const refused = await world.call("GET", "/v1/pets", { key });
    expect(limits(refused)).toEqual({ limit: "12", remaining: "0", reset: seconds(NEXT_MIDNIGHT) });
    expect(refused.headers.get("retry-after")).toBe(String((NEXT_MIDNIGHT - NEXT_MINUTE - 30_000) / 1000));
    await errorBody(refused, 429, "rate_limited");
    world.clock.now = NEXT_MIDNIGHT;
    expect((await world.call("GET", "/v1/pets", { key })).status).toBe(200);
  });

  it("when both windows refuse, reports the one that resets last", async () => {
    const key = await world.key({ plan: "free", perMinute: 3, perDay: 3 });
    await spend(key, 3);
    const refused = await world.call("GET", "/v1/pets", { key });
    expect(limits(refused).reset).toBe(seconds(NEXT_MIDNIGHT));
  });

  it("sends Retry-After of at least 1 second, rounded up", async () => {
    const key = await world.key({ plan: "free", perMinute: 1, perDay: 100 });
    await spend(key, 1);
    // Time only moves forward here: a clock set back over 1 s would start the bucket over.
    world.clock.now = NEXT_MINUTE - 1500;
    expect((await world.call("GET", "/v1/pets", { key })).headers.get("retry-after")).toBe("2");
    world.clock.now = NEXT_MINUTE - 1;
    expect((await world.call("GET", "/v1/pets", { key })).headers.get("retry-after")).toBe("1");
  });

  it("counts 400, 404 and 401 answers against the bucket", async () => {
    const key = await world.key();
    await world.call("GET", "/v1/pets?limit=0", { key });
    await world.call("GET", "/v1/pets/999", { key });
    await world.call("GET", "/v1/nowhere", { key });
    expect(limits(await world.call("GET", "/v1/pets", { key })).remaining).toBe("56");
  });

  it("keeps separate buckets per key", async () => {
    const a = await world.key();
    const b = await world.key();
    await spend(a, 5);
    expect(limits(await world.call("GET", "/v1/pets", { key: b })).remaining).toBe("59");
  });

  it("bans a bucket refused more than 30 times in one minute for 600 s, with code temporarily_banned", async () => {
    const key = await world.key({ plan: "free", perMinute: 1, perDay: 1000 });
    await spend(key, 1);
    const refusals = await Promise.all(Array.from({ length: 30 }, () => world.call("GET", "/v1/pets", { key })));
    for (const r of refusals) expect(((await r.json()) as { code: string }).code).toBe("rate_limited");
    const banned = await world.call("GET", "/v1/pets", { key });
    expect(banned.headers.get("retry-after")).toBe("600");
    expect(limits(banned)).toEqual({ limit: "1", remaining: "0", reset: seconds(T0 + 600_000) });
    await errorBody(banned, 429, "temporarily_banned");

    // Still banned after the minute resets; requests during the ban do not extend it.
    world.clock.now = NEXT_MINUTE;
    const later = await world.call("GET", "/v1/pets", { key });
    expect(later.headers.get("retry-after")).toBe(String(600 - 50));
    // A ban reports the minute window it was earned in, with nothing left until it lifts.
    expect(limits(later)).toEqual({ limit: "1", remaining: "0", reset: seconds(T0 + 600_000) });
    expect(later.headers.get("ratelimit")).toBe('"minute";r=0;t=550');
    await errorBody(later, 429, "temporarily_banned");
    world.clock.now = T0 + 600_000 - 1;
    expect((await world.call("GET", "/v1/pets", { key })).status).toBe(429);
    world.clock.now = T0 + 600_000;
    expect((await world.call("GET", "/v1/pets", { key })).status).toBe(200);
  });

  it("does not ban at exactly 30 refusals in a minute", async () => {
    const key = await world.key({ plan: "free", perMinute: 1, perDay: 1000 });
    await spend(key, 1);
    await spend(key, 30);
    world.clock.now = NEXT_MINUTE;
    expect((await world.call("GET", "/v1/pets", { key })).status).toBe(200);
  });

  it("takes the ban's threshold and duration from configuration", async () => {
    const strict = await openWorld(kit, { ban: { threshold: 2, seconds: 90 } });
    const key = await strict.key({ plan: "free", perMinute: 1, perDay: 1000 });
    for (let i = 0; i < 3; i++) await strict.call("GET", "/v1/pets", { key });
    const banned = await strict.call("GET", "/v1/pets", { key });
    expect(banned.headers.get("retry-after")).toBe("90");
    await errorBody(banned, 429, "temporarily_banned");
    await strict.close();
  });

  it("sends the IETF RateLimit-Policy and RateLimit headers by default", async () => {
    const key = await world.key();
    const response = await world.call("GET", "/v1/pets", { key });
    expect(response.headers.get("ratelimit-policy")).toBe('"minute";q=60;w=60, "day";q=1000;w=86400');
    expect(response.headers.get("ratelimit")).toBe('"minute";r=59;t=50');
  });

  it("leaves the IETF headers out when the option turns them off", async () => {
    const plain = await openWorld(kit, { ietfRateLimitHeaders: false });
    const key = await plain.key();
    const response = await plain.call("GET", "/v1/pets", { key });
    expect(response.headers.get("ratelimit")).toBeNull();
    expect(response.headers.get("ratelimit-policy")).toBeNull();
    expect(response.headers.get("x-ratelimit-limit")).toBe("60");
    await plain.close();
  });

  it("admits exactly the limit out of many concurrent requests", async () => {
    const key = await world.key({ plan: "free", perMinute: 25, perDay: 1000 });
    const statuses = await Promise.all(
      Array.from({ length: 60 }, () => world.call("GET", "/v1/pets", { key }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(25);
    expect(statuses.filter((s) => s === 429)).toHaveLength(35);
  });
});
