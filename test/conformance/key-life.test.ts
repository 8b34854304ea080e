import { issueApiKey, rollApiKey } from "@petstore/core";
import { describe, expect, it } from "vitest";
import { ADAPTER_KITS, beforeEachWorld, errorBody, T0, type World } from "./harness.js";

const ADMIN = { who: "admin:tok_test", from: "192.0.2.50" };
const HOUR = 3_600_000;

describe.each(ADAPTER_KITS)("the life of a key on $name", (kit) => {
  let world: World;
  beforeEachWorld(kit, { keyCacheMs: 5_000, rolledKeyLink: "https://shop.example/keys" }, (opened) => (world = opened));

  const get = (key: string) => world.call("GET", "/v1/pets?limit=1", { key });

  it("accepts a rolled key's old secret until the overlap ends, telling it so in every answer, then refuses it; the new one works throughout", async () => {
    const { key: old, record } = await issueApiKey(world.adapters.keys, { plan: "free" });
    expect((await get(old)).status).toBe(200);
    const rolled = await rollApiKey(world.adapters.keys, record.id, 60_000, ADMIN);
    if (rolled.state !== "changed") throw new Error(`roll: ${rolled.state}`);
    const rolledAt = rolled.record.rolled!.at;
    // The old secret, once the servers' key caches (5 s) have seen the roll: accepted, with the roll's headers.
    for (const step of [5_000, 30_000, 59_999]) {
      world.clock.now = rolledAt + step;
      const response = await get(old);
      expect(response.status).toBe(200);
      expect(response.headers.get("deprecation")).toBe(`@${Math.floor(rolledAt / 1000)}`);
      expect(response.headers.get("sunset")).toBe(new Date(rolledAt + 60_000).toUTCString());
      expect(response.headers.get("link")).toBe('<https://shop.example/keys>; rel="deprecation"');
      const fresh = await get(rolled.key);
      expect(fresh.status).toBe(200);
      expect(fresh.headers.get("deprecation")).toBeNull();
    }
    // From the overlap's end, by the store's clock: 401, though a server may still cache it.
    world.clock.now = rolledAt + 60_000;
    const refused = await get(old);
    expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
    await errorBody(refused, 401, "unauthorized");
    world.clock.now += 5_000;
    await errorBody(await get(old), 401, "unauthorized");
    expect((await get(rolled.key)).status).toBe(200);
  });

  it("keeps a rolled key's counters: rolling never resets a quota", async () => {
    const { key: old, record } = await issueApiKey(world.adapters.keys, {
      plan: "enterprise",
      perMinute: 5,
      perDay: 100,
    });
    for (let i = 0; i < 4; i++) expect((await get(old)).status).toBe(200);
    const rolled = await rollApiKey(world.adapters.keys, record.id, 0, ADMIN);
    if (rolled.state !== "changed") throw new Error(`roll: ${rolled.state}`);
    const fifth = await get(rolled.key);
    expect(fifth.status).toBe(200);
    expect(fifth.headers.get("x-ratelimit-remaining")).toBe("0");
    await errorBody(await get(rolled.key), 429, "rate_limited");
  });

  it("refuses the old secret at once after a roll with no overlap", async () => {
    const { key: old, record } = await issueApiKey(world.adapters.keys, { plan: "free" });
    await rollApiKey(world.adapters.keys, record.id, 0, ADMIN);
    await errorBody(await get(old), 401, "unauthorized");
  });

  /** The message of a 401 answer. */
  const refusal = async (response: Response) => {
    const message = ((await response.clone().json()) as { message: string }).message;
    await errorBody(response, 401, "unauthorized");
    return message;
  };

  it("refuses a key from its expiry on, by the store's clock, even while it is cached", async () => {
    const { key } = await issueApiKey(
      world.adapters.keys,
      { plan: "free", expiresAt: world.clock.now + HOUR },
      { now: world.clock.now },
    );
    expect((await get(key)).status).toBe(200);
    world.clock.now += HOUR - 1;
    expect((await get(key)).status).toBe(200);
    world.clock.now += 1;
    expect(await refusal(await get(key))).toBe("The API key has expired");
  });

  it("keeps saying an expired key expired once no cache holds it, for as long as its record exists", async () => {
    const { key } = await issueApiKey(
      world.adapters.keys,
      { plan: "free", expiresAt: world.clock.now + HOUR },
      { now: world.clock.now },
    );
    for (const later of [HOUR, HOUR + 5_000, HOUR + 24 * HOUR]) {
      world.clock.now = T0 + later;
      expect(await refusal(await get(key)), `${later} ms on`).toBe("The API key has expired");
    }
  });

  it("says a revoked key was revoked, and an old secret past its overlap that it was rolled out", async () => {
    const { key, record } = await issueApiKey(world.adapters.keys, { plan: "free" });
    const { key: old, record: rolling } = await issueApiKey(world.adapters.keys, { plan: "free" });
    await world.adapters.keys.revoke(record.id, { actor: ADMIN });
    await rollApiKey(world.adapters.keys, rolling.id, 60_000, ADMIN);
    world.clock.now += 60_000;
    expect(await refusal(await get(key))).toBe("The API key has been revoked");
    expect(await refusal(await get(old))).toBe(
      "This secret of the API key was replaced when the key was rolled: use the new one",
    );
  });

  it("applies an upgrade within the key cache's 5 s, keeping today's usage", async () => {
    const { key, record } = await issueApiKey(world.adapters.keys, { plan: "free" });
    for (let i = 0; i < 3; i++) await get(key);
    expect((await get(key)).headers.get("x-ratelimit-limit")).toBe("60");
    expect(await world.adapters.keys.update(record.id, { plan: "pro" }, { actor: ADMIN })).toMatchObject({
      state: "changed",
      record: { plan: "pro" },
    });
    world.clock.now += 5_000;
    const upgraded = await get(key);
    expect(upgraded.headers.get("x-ratelimit-limit")).toBe("300");
    // Five requests this minute, the upgraded one included: the day's 10,000 carry the same count.
    expect(upgraded.headers.get("x-ratelimit-remaining")).toBe("295");
  });

  it("refuses a revoked key within the key cache's 5 s though the clocks stepped back an hour since it was cached", async () => {
    const { key, record } = await issueApiKey(world.adapters.keys, { plan: "free" });
    world.step(HOUR);
    expect((await get(key)).status).toBe(200);
    world.step(-HOUR);
    await world.adapters.keys.revoke(record.id, { actor: ADMIN });
    world.clock.now += 5_000;
    await errorBody(await get(key), 401, "unauthorized");
  });

  it("writes a key's last use 10 s after the first count waited though the clocks stepped back an hour meanwhile", async () => {
    const { key, record } = await issueApiKey(world.adapters.keys, { plan: "free" });
    const usedAt = world.clock.now;
    await get(key);
    world.step(-HOUR);
    world.clock.now += 10_000;
    await get(key);
    // Written then, with the latest use of the two by the store's clock, which never moves back.
    await expect.poll(async () => (await world.adapters.keys.get(record.id))!.lastUsedAt).toBe(usedAt);
  });
});
