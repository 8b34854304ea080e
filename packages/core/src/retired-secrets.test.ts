import { memoryAdapters } from "@petstore/adapters/memory";
import { beforeAll, describe, expect, it } from "vitest";
import { createPetstore } from "./app.js";
import { createAccount } from "./keys/account-life.js";
import { issueApiKey } from "./keys/issue-api-key.js";
import { rollApiKey } from "./keys/roll-api-key.js";
import type { Adapters } from "./ports.js";

/** 2030-01-15 12:00:00 UTC: a minute's start, so every request of a scenario falls in one minute window. */
const T0 = Date.UTC(2030, 0, 15, 12);
const ADMIN = { who: "admin:tok_test", from: "192.0.2.50" };
/** The address the dead secret is sent from, and another one's. */
const HOLDER = "203.0.113.9";
const STRANGER = "203.0.113.10";
/** A well-formed key no store has. */
const UNKNOWN = "psk_000000000000000000000000000000003pLtxo";

interface World {
  adapters: Adapters;
  clock: { now: number };
  get(key: string, address?: string): Promise<Response>;
  flush(): Promise<void>;
}

/** A petstore on the memory store; the server's clock runs `serverOffset` ms off its store's (one of a fleet, skewed). */
function openWorld(serverOffset = 0): World {
  const clock = { now: T0 };
  const adapters = memoryAdapters({ clock: () => clock.now });
  const petstore = createPetstore({
    ...adapters,
    clock: () => clock.now + serverOffset,
    monotonicClock: () => clock.now,
  });
  return {
    adapters,
    clock,
    get: (key, address = HOLDER) =>
      petstore.request(
        "http://petstore.test/v1/pets?limit=1",
        { headers: { Authorization: `Bearer ${key}` } },
        {
          clientAddress: address,
        },
      ),
    flush: petstore.flush,
  };
}

/**
 * A secret that no longer works, the key it was, and a live secret that shares its buckets:
 * Pro's 300 a minute, so that a count there shows apart from the address's Free 60.
 */
interface Scenario {
  dead: string;
  deadKeyId: string;
  live: string;
  /** Requests the live secret's binding bucket counted before the dead secret's 100. */
  spent: number;
}

const scenarios: { name: string; serverOffset?: number; make(world: World): Promise<Scenario> }[] = [
  {
    name: "the old secret of a key rolled with no overlap",
    async make({ adapters }) {
      const { key, record } = await issueApiKey(adapters.keys, { plan: "pro" });
      const rolled = await rollApiKey(adapters.keys, record.id, 0, ADMIN);
      if (rolled.state !== "changed") throw new Error(`roll: ${rolled.state}`);
      return { dead: key, deadKeyId: record.id, live: rolled.key, spent: 0 };
    },
  },
  {
    name: "the old secret of a key rolled with a 30 s overlap, once it ended",
    async make(world) {
      const { key, record } = await issueApiKey(world.adapters.keys, { plan: "pro" });
      const rolled = await rollApiKey(world.adapters.keys, record.id, 30_000, ADMIN);
      if (rolled.state !== "changed") throw new Error(`roll: ${rolled.state}`);
      for (let i = 0; i < 3; i++) expect((await world.get(key)).status).toBe(200);
      world.clock.now += 30_000;
      return { dead: key, deadKeyId: record.id, live: rolled.key, spent: 3 };
    },
  },
  {
    name: "the old secret of a key rolled with no overlap, on a server whose clock is 65 s behind its store's",
    serverOffset: -65_000,
    async make(world) {
      const { key, record } = await issueApiKey(world.adapters.keys, { plan: "pro" });
      const rolled = await rollApiKey(world.adapters.keys, record.id, 0, ADMIN);
      if (rolled.state !== "changed") throw new Error(`roll: ${rolled.state}`);
      // Any request tells the server its store's instant; before one it has only its own clock.
      expect((await world.get(rolled.key, STRANGER)).status).toBe(200);
      return { dead: key, deadKeyId: record.id, live: rolled.key, spent: 1 };
    },
  },
  {
    name: "an expired key of an account whose other key is valid",
    async make(world) {
      const { keys } = world.adapters;
      const account = await createAccount(keys, { name: "Shop", plan: "pro" });
      const expiring = await issueApiKey(
        keys,
        { plan: "pro", expiresAt: T0 + 30_000 },
        { now: T0, accountId: account.id },
      );
      // Its own limit above the account's: its answers report the account's bucket, shared with the expired key.
      const other = await issueApiKey(
        keys,
        { plan: "enterprise", perMinute: 1_000, perDay: 100_000 },
        { accountId: account.id },
      );
      for (let i = 0; i < 2; i++) expect((await world.get(expiring.key)).status).toBe(200);
      world.clock.now += 30_000;
      return { dead: expiring.key, deadKeyId: expiring.record.id, live: other.key, spent: 2 };
    },
  },
];

/** Each answer as `<status> <code>`. */
async function answers(world: World, key: string, address: string, times: number): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < times; i++) {
    const response = await world.get(key, address);
    seen.push(`${response.status} ${((await response.json()) as { code?: string }).code}`);
  }
  return seen;
}

describe.each(scenarios)("$name, sent 100 times from one address", ({ serverOffset, make }) => {
  let world: World;
  let scenario: Scenario;
  let refused: string[];

  beforeAll(async () => {
    world = openWorld(serverOffset);
    scenario = await make(world);
    refused = await answers(world, scenario.dead, HOLDER, 100);
  });

  it("is answered as an unknown key is: 401 up to its address's Free limit, then 429, and after 30 refusals its address is banned", async () => {
    expect(refused).toEqual([
      ...Array(60).fill("401 unauthorized"),
      ...Array(30).fill("429 rate_limited"),
      ...Array(10).fill("429 temporarily_banned"),
    ]);
    expect(await answers(world, UNKNOWN, STRANGER, 100)).toEqual(refused);
  });

  it("leaves the live secret its buckets' full quota, unbanned", async () => {
    const response = await world.get(scenario.live, STRANGER);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-ratelimit-remaining")).toBe(String(300 - scenario.spent - 1));
  });

  it("counts them in the key's usage history as unauthorized", async () => {
    await world.flush();
    const minutes = await world.adapters.keys.usage({
      keyId: scenario.deadKeyId,
      resolution: "minute",
      from: T0,
      to: T0 + 60_000,
    });
    expect(minutes).toEqual([expect.objectContaining({ unauthorized: 100, rateLimited: 0, banned: 0 })]);
  });
});
