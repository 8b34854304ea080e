import { beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../keys/issue-api-key.js";
import { adminWorld, T0 } from "../../../../test/_support/admin-world.js";
import type { KeyView } from "./schemas.js";

const HOUR = 3_600_000;
/**
 * One world for the suite, at T0 + 2 h: a key banned while rolled, a pro key used most today,
 * a rolled one, a revoked one, an expired one, and one never used; its requests written by
 * the API's flush, the admin API reading them on the same clock.
 */
const { clock, adapters, petstore, call, api } = adminWorld({
  petstore: { keyCacheMs: 0, ban: { threshold: 2, seconds: 3 * HOUR } },
});
const ids = { banned: "", busy: "", rolled: "", revoked: "", expired: "", idle: "" };

const get = (path: string) => call("GET", path);
const listed = async (query: string) => {
  const response = await get(`/keys?${query}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as KeyView[]).map((view) => view.id);
};

beforeAll(async () => {
  const make = (plan: "free" | "pro", extra: { expiresAt?: number; perMinute?: number } = {}) =>
    issueApiKey(adapters.keys, { plan, ...extra });
  const banned = await make("free", { perMinute: 2 });
  const busy = await make("pro");
  const rolled = await make("free");
  const revoked = await make("pro");
  const expired = await make("free", { expiresAt: T0 + HOUR });
  const idle = await make("free");
  Object.assign(ids, {
    banned: banned.record.id,
    busy: busy.record.id,
    rolled: rolled.record.id,
    revoked: revoked.record.id,
    expired: expired.record.id,
    idle: idle.record.id,
  });
  await adapters.keys.roll(ids.banned, "0".repeat(64), 6 * HOUR, { actor: { who: "test" } });
  await adapters.keys.roll(ids.rolled, "1".repeat(64), 6 * HOUR, { actor: { who: "test" } });
  await api(expired.key);
  clock.now = T0 + 2 * HOUR;
  await api(rolled.key);
  for (let i = 0; i < 5; i++) await api(busy.key);
  // Two admitted, then refused past the threshold: banned for three hours.
  for (let i = 0; i < 6; i++) await api(banned.key);
  await adapters.keys.revoke(ids.revoked);
  await petstore.flush();
});

describe("GET /keys, filtered and sorted", () => {
  it("shows every state a key is in at once: banned while rolled is both", async () => {
    const view = (await (await get(`/keys/${ids.banned}`)).json()) as KeyView;
    expect(view.states).toEqual(["active", "rolling", "banned"]);
    expect(((await (await get(`/keys/${ids.rolled}`)).json()) as KeyView).states).toEqual(["active", "rolling"]);
    expect(((await (await get(`/keys/${ids.expired}`)).json()) as KeyView).states).toEqual(["expired"]);
  });

  it("keeps the keys in one state: banned by the limiter's ban, the others by the record", async () => {
    expect(await listed("state=banned")).toEqual([ids.banned]);
    expect(await listed("state=active")).toEqual([ids.banned, ids.busy, ids.rolled, ids.idle]);
    expect(await listed("state=rolling")).toEqual([ids.banned, ids.rolled]);
    expect(await listed("state=expired")).toEqual([ids.expired]);
    expect(await listed("state=revoked")).toEqual([ids.revoked]);
  });

  it("keeps the keys of one plan, with a state and a search too", async () => {
    expect(await listed("plan=pro")).toEqual([ids.busy, ids.revoked]);
    expect(await listed("plan=pro&state=active")).toEqual([ids.busy]);
    expect(await listed(`plan=free&q=${ids.idle.slice(4, 12)}`)).toEqual([ids.idle]);
  });

  it("sorts by last use, the latest first and keys never used last", async () => {
    expect(await listed("sort=lastUsed")).toEqual([
      ids.banned,
      ids.busy,
      ids.rolled,
      ids.expired,
      ids.revoked,
      ids.idle,
    ]);
  });

  it("sorts by the requests admitted today, the most first", async () => {
    expect(await listed("sort=today")).toEqual([ids.busy, ids.banned, ids.rolled, ids.expired, ids.revoked, ids.idle]);
  });

  it("pages a filtered, sorted list with a Link that keeps its filters", async () => {
    const first = await get("/keys?sort=today&state=active&limit=2");
    expect(((await first.json()) as KeyView[]).map((view) => view.id)).toEqual([ids.busy, ids.banned]);
    const next = /^<\/admin\/v1([^>]+)>; rel="next"$/.exec(first.headers.get("link")!)![1]!;
    expect(new URL(next, "http://x").searchParams.get("sort")).toBe("today");
    expect(await listed(next.slice("/keys?".length))).toEqual([ids.rolled, ids.idle]);
  });

  it("refuses a state, plan or sort it does not know with 400 naming the parameter", async () => {
    for (const [name, value] of [
      ["state", "lost"],
      ["plan", "gold"],
      ["sort", "name"],
    ]) {
      const response = await get(`/keys?${name}=${value}`);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { details: { path: string }[] }).details).toEqual([
        { path: name, message: expect.stringMatching(/^must be one of /) },
      ]);
    }
  });
});
