import { memoryAdapters } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import type { ApiKeyRecord, WindowPair } from "../ports.js";
import { keyView } from "./key-view.js";

const T0 = Date.UTC(2030, 0, 15, 12, 0, 10);
const record: ApiKeyRecord = {
  id: "key_view",
  accountId: "acct_view",
  hash: "0".repeat(64),
  plan: "pro",
  perDay: 50,
  label: "shop",
  createdAt: T0 - 60_000,
  rolled: { previousHash: "1".repeat(64), at: T0 - 1_000, until: T0 + 59_000 },
};

/** A limiter at T0 that counted three requests of the key, against `perMinute` and 50 a day, banning after `banAfter` refusals. */
async function afterThreeRequests({ perMinute, banAfter }: { perMinute: number; banAfter: number }) {
  const { limiter } = memoryAdapters({ clock: () => T0 });
  const windows: WindowPair = [
    { name: "minute", limit: perMinute, seconds: 60 },
    { name: "day", limit: 50, seconds: 86_400 },
  ];
  for (let i = 0; i < 3; i++)
    await limiter.hit({ bucket: "{acct_view}key:key_view", windows, ban: { threshold: banAfter, seconds: 600 } });
  return limiter;
}

describe("keyView", () => {
  it("reads usage and the ban from the limiter's windows of the key, counting nothing", async () => {
    const limiter = await afterThreeRequests({ perMinute: 300, banAfter: 30 });
    const view = await keyView(record, { limiter });
    expect(view).toEqual({
      id: "key_view",
      accountId: "acct_view",
      plan: "pro",
      perMinute: 300,
      perDay: 50,
      label: "shop",
      createdAt: new Date(T0 - 60_000).toISOString(),
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
      scopes: ["pets:read", "pets:write", "orders:read"],
      allowFrom: null,
      rolling: { since: new Date(T0 - 1_000).toISOString(), until: new Date(T0 + 59_000).toISOString() },
      usage: {
        minute: { used: 3, limit: 300, resetAt: new Date(Date.UTC(2030, 0, 15, 12, 1)).toISOString() },
        day: { used: 3, limit: 50, resetAt: new Date(Date.UTC(2030, 0, 16)).toISOString() },
        bannedUntil: null,
      },
      states: ["active", "rolling"],
    });
    // Peeking counted nothing.
    expect((await keyView(record, { limiter })).usage?.day.used).toBe(3);
  });

  it("shows the scopes and ranges a key was given", async () => {
    const limited = { ...record, scopes: ["pets:read" as const], allowFrom: ["10.0.0.0/8", "2001:db8::/32"] };
    expect(await keyView(limited)).toMatchObject({ scopes: ["pets:read"], allowFrom: ["10.0.0.0/8", "2001:db8::/32"] });
  });

  it("says no usage without a limiter that can peek, takes the host's plans, and ends the overlap by the clock", async () => {
    const view = await keyView(record, { plans: { pro: { perMinute: 5, perDay: 7 } }, clock: () => T0 + 59_000 });
    expect(view).toMatchObject({ perMinute: 5, perDay: 50, usage: null, rolling: null, states: ["active"] });
  });

  it("lists every state a key is in at once: expired and revoked, banned while rolling", async () => {
    const limiter = await afterThreeRequests({ perMinute: 1, banAfter: 1 });
    expect((await keyView(record, { limiter })).states).toEqual(["active", "rolling", "banned"]);
    const gone = { ...record, expiresAt: T0 - 1, revokedAt: T0 - 2 };
    expect(await keyView(gone, { clock: () => T0 })).toMatchObject({ states: ["expired", "revoked"], rolling: null });
  });
});
