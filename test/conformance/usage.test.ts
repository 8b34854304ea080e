import { issueApiKey } from "@petstore/core";
import { describe, expect, it } from "vitest";
import { ADAPTER_KITS, beforeEachWorld, openWorld, type World } from "./harness.js";

const HOUR = 3_600_000;
const MINUTE = 60_000;

/** The answers' outcomes as a key's usage counts them, from their status and code. */
async function outcomes(responses: Response[]) {
  const counts = { admitted: 0, rateLimited: 0, banned: 0, unauthorized: 0 };
  for (const response of responses) {
    const code = response.ok ? undefined : ((await response.json()) as { code: string }).code;
    if (code === undefined) counts.admitted++;
    else if (code === "rate_limited") counts.rateLimited++;
    else if (code === "temporarily_banned") counts.banned++;
    else if (code === "unauthorized") counts.unauthorized++;
  }
  return counts;
}

describe.each(ADAPTER_KITS)("a key's usage history on $name", (kit) => {
  let world: World;
  // Past two refusals within a minute a key is banned: every outcome within a few requests.
  beforeEachWorld(kit, { ban: { threshold: 2, seconds: 600 } }, (opened) => (world = opened));

  const get = (key: string, address?: string) =>
    world.call("GET", "/v1/pets?limit=1", { key, ...(address !== undefined && { address }) });
  const minuteOf = (at: number) => at - (at % MINUTE);
  const minutes = (keyId: string) =>
    world.adapters.keys.usage({ keyId, resolution: "minute", from: 0, to: world.clock.now + HOUR });

  it("counts a key's requests by how they were answered, in the minute of the limiter's instant", async () => {
    const { key, record } = await issueApiKey(world.adapters.keys, { plan: "enterprise", perMinute: 3, perDay: 100 });
    const answers: Response[] = [];
    for (let i = 0; i < 8; i++) answers.push(await get(key));
    const counted = await outcomes(answers);
    expect(counted).toEqual({ admitted: 3, rateLimited: 2, banned: 3, unauthorized: 0 });
    await world.petstore.flush();
    expect(await minutes(record.id)).toEqual([{ at: minuteOf(world.clock.now), ...counted }]);
  });

  it("counts the requests with a revoked key's secret as its unauthorized ones, whatever its client's address", async () => {
    const { key, record } = await issueApiKey(world.adapters.keys, { plan: "free" });
    await world.adapters.keys.revoke(record.id);
    await get(key, "192.0.2.1");
    await get(key, "192.0.2.2");
    await world.petstore.flush();
    expect(await minutes(record.id)).toEqual([
      { at: minuteOf(world.clock.now), admitted: 0, rateLimited: 0, banned: 0, unauthorized: 2 },
    ]);
    expect((await world.adapters.keys.get(record.id))!.lastUsedAt).toBeUndefined();
  });

  it("counts a cached key's requests from its expiry on as unauthorized", async () => {
    const { key, record } = await issueApiKey(
      world.adapters.keys,
      { plan: "free", expiresAt: world.clock.now + 1_000 },
      { now: world.clock.now },
    );
    expect((await get(key)).status).toBe(200);
    world.clock.now += 1_000;
    expect((await get(key)).status).toBe(401);
    await world.petstore.flush();
    const rows = await minutes(record.id);
    expect(rows.reduce((sum, row) => sum + row.admitted, 0)).toBe(1);
    expect(rows.reduce((sum, row) => sum + row.unauthorized, 0)).toBe(1);
  });

  it("writes each key's last use with its counts, at the limiter's instant, in the minutes and the day they fall in", async () => {
    const { key, record } = await issueApiKey(world.adapters.keys, { plan: "free" });
    await get(key);
    world.clock.now += MINUTE;
    await get(key);
    expect((await world.adapters.keys.get(record.id))!.lastUsedAt).toBeUndefined();
    await world.petstore.flush();
    expect((await world.adapters.keys.get(record.id))!.lastUsedAt).toBe(world.clock.now);
    expect((await minutes(record.id)).map((row) => [row.at, row.admitted])).toEqual([
      [minuteOf(world.clock.now - MINUTE), 1],
      [minuteOf(world.clock.now), 1],
    ]);
    const days = await world.adapters.keys.usage({ keyId: record.id, resolution: "day", from: 0, to: world.clock.now });
    expect(days.map((row) => row.admitted)).toEqual([2]);
  });

  it("records nothing when told not to", async () => {
    const quiet = await openWorld(kit, { recordUsage: false });
    try {
      const { key, record } = await issueApiKey(quiet.adapters.keys, { plan: "free" });
      await quiet.call("GET", "/v1/pets", { key });
      await quiet.petstore.flush();
      expect(
        await quiet.adapters.keys.usage({ keyId: record.id, resolution: "day", from: 0, to: quiet.clock.now + HOUR }),
      ).toEqual([]);
      expect((await quiet.adapters.keys.get(record.id))!.lastUsedAt).toBeUndefined();
    } finally {
      await quiet.close();
    }
  });
});
