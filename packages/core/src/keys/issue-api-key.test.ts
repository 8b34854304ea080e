import { memoryKeys } from "@petstore/adapters/memory";
import { beforeEach, describe, expect, it } from "vitest";
import type { ApiKeys } from "../ports.js";
import { ownAccountId } from "./bucket.js";
import { generateApiKey, hashApiKey } from "./api-key.js";
import { issueApiKey } from "./issue-api-key.js";
import { KeyRuleError } from "./rules.js";

const T0 = Date.UTC(2030, 0, 15, 12);

describe("issueApiKey", () => {
  let keys: ApiKeys;
  beforeEach(() => {
    keys = memoryKeys({ clock: () => T0 });
  });

  it("stores only the key's hash, made at the store's instant: the key text appears nowhere in the stored record", async () => {
    const { key, record } = await issueApiKey(keys, { plan: "pro", label: "ci" });
    const [stored] = await keys.list();
    expect(stored).toEqual(record);
    expect(stored).toEqual({
      id: record.id,
      hash: await hashApiKey(key),
      plan: "pro",
      label: "ci",
      accountId: ownAccountId(record.id),
      createdAt: T0,
    });
    const text = JSON.stringify(stored);
    expect(text).not.toContain(key.slice(4, 36));
    expect(text).not.toContain(key.slice(36));
    expect(await keys.findByHash(await hashApiKey(key))).toEqual({ ...record, account: { plan: "pro" } });
  });

  it("gives each key its own id, not derived from the key", async () => {
    const a = await issueApiKey(keys, { plan: "free" });
    const b = await issueApiKey(keys, { plan: "free" });
    expect(a.record.id).not.toBe(b.record.id);
    expect(a.record.id).toMatch(/^key_[0-9A-Za-z]{16}$/);
    expect(a.key).not.toContain(a.record.id.slice(4));
  });

  it("uses the injected randomness", async () => {
    const { key, record } = await issueApiKey(keys, { plan: "free" }, { random: (n) => "7".repeat(n) });
    expect(key).toBe(generateApiKey(() => "7".repeat(32)));
    expect(record.id).toBe(`key_${"7".repeat(16)}`);
  });

  it("refuses a plan that does not exist with a TypeError naming the plans, storing nothing", async () => {
    const refused = issueApiKey(keys, { plan: "gold" as "free" });
    await expect(refused).rejects.toThrow(TypeError);
    await expect(refused).rejects.toThrow("plan must be one of free, pro, business, enterprise");
    expect(await keys.list()).toEqual([]);
  });

  it("requires both perMinute and perDay for an enterprise key, storing nothing otherwise", async () => {
    await expect(issueApiKey(keys, { plan: "enterprise" })).rejects.toThrow(
      "perMinute is required for an enterprise key (its limits are its own, not a plan's); perDay is required for an enterprise key (its limits are its own, not a plan's)",
    );
    await expect(issueApiKey(keys, { plan: "enterprise", perMinute: 5_000 })).rejects.toThrow(KeyRuleError);
    await expect(issueApiKey(keys, { plan: "enterprise", perDay: 5_000 })).rejects.toThrow(KeyRuleError);
    expect(await keys.list()).toEqual([]);
    const { record } = await issueApiKey(keys, { plan: "enterprise", perMinute: 5_000, perDay: 1_000_000 });
    expect(record).toMatchObject({ plan: "enterprise", perMinute: 5_000, perDay: 1_000_000 });
  });

  it("refuses limits that are not whole numbers from 1 to 1,000,000,000", async () => {
    for (const value of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 1_000_000_001]) {
      await expect(issueApiKey(keys, { plan: "pro", perMinute: value })).rejects.toThrow(
        "perMinute must be a whole number from 1 to 1000000000",
      );
      await expect(issueApiKey(keys, { plan: "pro", perDay: value })).rejects.toThrow(TypeError);
    }
    expect(await keys.list()).toEqual([]);
  });

  it("refuses an expiry that is not after `now`", async () => {
    await expect(issueApiKey(keys, { plan: "free", expiresAt: T0 }, { now: T0 })).rejects.toThrow(
      "expiresAt must be in the future, not 2030-01-15T12:00:00.000Z (it is 2030-01-15T12:00:00.000Z)",
    );
    const { record } = await issueApiKey(keys, { plan: "free", expiresAt: T0 + 1 }, { now: T0 });
    expect(record.expiresAt).toBe(T0 + 1);
  });

  it("refuses a label an operator's screen would show wrong, with the rule it breaks", async () => {
    for (const [label, message] of [
      ["", "label must not be empty"],
      ["x".repeat(101), "label must be at most 100 characters"],
      ["a\nb", "label must not contain control characters"],
      ["\u202Eevil", "label must not contain bidirectional control characters (U+202A to U+202E, U+2066 to U+2069)"],
      ["ok\u2067", "label must not contain bidirectional control characters (U+202A to U+202E, U+2066 to U+2069)"],
      ["\uFDD0", "label must not contain Unicode noncharacters"],
      ["\u{10FFFF}", "label must not contain Unicode noncharacters"],
      ["lone \uD800", "label must be valid UTF-16 (no lone surrogate)"],
    ] as const) {
      await expect(issueApiKey(keys, { plan: "free", label }), JSON.stringify(label)).rejects.toThrow(message);
    }
    expect(await keys.list()).toEqual([]);
    // Characters beyond the Basic Multilingual Plane count once: 100 of them is a label.
    const { record } = await issueApiKey(keys, { plan: "free", label: "🐕".repeat(100) });
    expect(record.label).toBe("🐕".repeat(100));
  });

  it("audits a key made by an actor with everything it sets, its expiry as ISO 8601", async () => {
    const actor = { who: "cli:ana@vm1" };
    const input = { plan: "pro", perMinute: 1_000_000_000, label: "Acme", expiresAt: T0 + 3_600_000 } as const;
    const { record } = await issueApiKey(keys, input, { actor, now: T0 });
    const [entry] = await keys.auditTrail({ limit: 1 });
    expect(entry).toMatchObject({ action: "create", keyId: record.id, actor });
    expect(entry!.details).toEqual({
      plan: "pro",
      perMinute: 1_000_000_000,
      label: "Acme",
      expiresAt: "2030-01-15T13:00:00.000Z",
    });
  });

  it("keeps a key's scopes in their order, and a key given every scope as one without scopes of its own", async () => {
    const { record } = await issueApiKey(keys, { plan: "free", scopes: ["orders:read", "pets:read"] });
    expect(record.scopes).toEqual(["pets:read", "orders:read"]);
    const all = await issueApiKey(keys, { plan: "free", scopes: ["pets:write", "orders:read", "pets:read"] });
    expect(all.record).not.toHaveProperty("scopes");
  });

  it("stores the ranges a key's requests must come from, and audits them with its scopes", async () => {
    const input = { plan: "free", scopes: ["pets:read"], allowFrom: ["10.0.0.0/8", "2001:db8::/32"] } as const;
    const { record } = await issueApiKey(
      keys,
      { ...input, scopes: [...input.scopes], allowFrom: [...input.allowFrom] },
      {
        actor: { who: "cli:ana@vm1" },
      },
    );
    expect(record).toMatchObject({ scopes: ["pets:read"], allowFrom: ["10.0.0.0/8", "2001:db8::/32"] });
    expect((await keys.auditTrail({ limit: 1 }))[0]!.details).toEqual(input);
  });

  it("refuses scopes that are none, unknown or repeated, and ranges that are malformed or too long a prefix", async () => {
    const refused = async (fields: object, path: string, message: string) =>
      expect(issueApiKey(keys, { plan: "free", ...fields })).rejects.toThrow(
        expect.objectContaining({ details: [{ path, message }] }),
      );
    const known = "one or more of pets:read, pets:write, orders:read";
    await refused({ scopes: [] }, "scopes", `must be ${known}`);
    await refused({ scopes: ["pets:delete"] }, "scopes", `must be ${known}, not 'pets:delete'`);
    await refused({ scopes: ["pets:read", "pets:read"] }, "scopes", "must name each scope once");
    await refused({ allowFrom: [] }, "allowFrom", "must be 1 to 100 CIDR ranges such as 10.0.0.0/8 or 2001:db8::/32");
    await refused(
      { allowFrom: ["10.0.0/8"] },
      "allowFrom",
      "must be CIDR ranges: '10.0.0/8' is not an IP address or CIDR range",
    );
    await refused(
      { allowFrom: ["2001:db8::/129"] },
      "allowFrom",
      "must be CIDR ranges: '2001:db8::/129' has a prefix past /128, the longest an IPv6 range has",
    );
    expect(await keys.list()).toEqual([]);
  });

  it("stores a key given to it instead of making one, and refuses one that is not well-formed", async () => {
    const given = generateApiKey();
    const { key, record } = await issueApiKey(
      keys,
      { plan: "enterprise", perMinute: 10, perDay: 100, label: "bootstrap" },
      { key: given },
    );
    expect(key).toBe(given);
    expect((await keys.findByHash(await hashApiKey(given)))!.id).toBe(record.id);
    // The last checksum character changed (to another one: a random key may end in "x").
    const tampered = `${given.slice(0, -1)}${given.endsWith("x") ? "y" : "x"}`;
    await expect(issueApiKey(keys, { plan: "free" }, { key: tampered })).rejects.toThrow(TypeError);
    await expect(issueApiKey(keys, { plan: "free" }, { key: given })).rejects.toThrow(
      "An API key is stored already with this secret",
    );
    expect(await keys.list()).toHaveLength(1);
  });

  it("says what it needs when given no key store or no input", async () => {
    await expect(issueApiKey(undefined as unknown as ApiKeys, { plan: "free" })).rejects.toThrow(
      "issueApiKey needs the ApiKeys port first (adapters.keys, e.g. memoryKeys())",
    );
    await expect(issueApiKey(keys, undefined as unknown as { plan: "free" })).rejects.toThrow(
      'issueApiKey needs what the key is: { plan: "free" | "pro" | "business" | "enterprise", ... }',
    );
  });

  it("leaves unset limits and label absent from the record", async () => {
    const { record } = await issueApiKey(keys, { plan: "business" });
    expect(Object.keys(record).sort()).toEqual(["accountId", "createdAt", "hash", "id", "plan"]);
  });

  it("makes the key an account of its own with its plan and limits, named after its label", async () => {
    const { record } = await issueApiKey(keys, { plan: "enterprise", perMinute: 70, perDay: 900, label: "shop" });
    expect(record.accountId).toBe(ownAccountId(record.id));
    expect(await keys.getAccount(record.accountId)).toMatchObject({
      name: "shop",
      plan: "enterprise",
      perMinute: 70,
      perDay: 900,
    });
  });

  it("puts the key into the account given, and refuses an account that does not exist", async () => {
    await keys.insertAccount({ id: "acct_shop", name: "Shop", plan: "pro" });
    const { record } = await issueApiKey(keys, { plan: "pro", perMinute: 10 }, { accountId: "acct_shop" });
    expect(record.accountId).toBe("acct_shop");
    await expect(issueApiKey(keys, { plan: "pro" }, { accountId: "acct_none" })).rejects.toThrow(
      "No account has the id acct_none",
    );
  });
});
