import { expect, it } from "vitest";
import { type Closable, describeOnMovedClock, describeWithFixture } from "./_fixture.js";
import { ownAccountId } from "../keys/bucket.js";
import { keyRecordIs } from "../keys/key-states.js";
import type {
  AccountLimits,
  AccountRecord,
  Actor,
  ApiKeyRecord,
  ApiKeys,
  AuditEntry,
  AuditNote,
  KeyListQuery,
  UsageCounts,
} from "../ports.js";

/** A fresh key store with no keys. */
export interface KeysFixture extends Closable {
  keys: ApiKeys;
}

/**
 * Makes a fresh key store whose rolls, expiries and audit trail follow `clock` (Unix ms), or
 * the store's own clock when `clock` is undefined: pass it to the adapter's `clock` option.
 */
export type MakeKeys = (clock: (() => number) | undefined) => Promise<KeysFixture>;

const ADMIN_ACTOR: Actor = { who: "admin:tok_1", from: "192.0.2.1" };
const CLI_ACTOR: Actor = { who: "cli:ops@vm1" };
const ADMIN: AuditNote = { actor: ADMIN_ACTOR };
const CLI: AuditNote = { actor: CLI_ACTOR };
const HOUR = 3_600_000;

const T0 = Date.UTC(2030, 0, 15, 12, 0, 0);
const hashOf = (n: number) => n.toString(16).padStart(64, "0");
const recordOf = (n: number, extra: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id: `key_${n}`,
  hash: hashOf(n),
  plan: "free",
  accountId: ownAccountId(`key_${n}`),
  createdAt: T0 + n,
  ...extra,
});
/** A key as `findByHash` finds it: with its account's plan and limits, which are its own for a key made alone. */
const found = (record: ApiKeyRecord): ApiKeyRecord => {
  const account: AccountLimits = { plan: record.plan };
  if (record.perMinute !== undefined) account.perMinute = record.perMinute;
  if (record.perDay !== undefined) account.perDay = record.perDay;
  return { ...record, account };
};
const counts = (admitted: number, rateLimited = 0, banned = 0, unauthorized = 0): UsageCounts => ({
  admitted,
  rateLimited,
  banned,
  unauthorized,
});
const byId = (a: ApiKeyRecord, b: ApiKeyRecord) => a.id.localeCompare(b.id);

/**
 * The `ApiKeys` contract: insert (a duplicate said, not thrown), find by hash (revoked, expired
 * and rolled-out secrets too), get, list and its pages, revoke (the first time kept), update,
 * roll with an overlap, lists by plan, state (as `keyRecordIs` says), last use and today's
 * usage, the audit trail written with each change as its note says and read by key, action and actor, optional
 * fields that stay absent when they were not set, and every instant by the store's clock. Its
 * usage history has a contract of its own (`keyUsageContract`).
 * @example apiKeysContract("memory", async (clock) => ({ keys: memoryKeys({ clock }) }));
 */
export function apiKeysContract(name: string, make: MakeKeys): void {
  describeOnMovedClock(`ApiKeys contract: ${name}`, T0, make, (fixture, clock) => {
    it("finds an inserted key by its hash, and answers the record it stored", async () => {
      expect(await fixture.keys.insert(recordOf(1))).toEqual({ state: "inserted", record: recordOf(1) });
      expect(await fixture.keys.findByHash(hashOf(1))).toEqual(found(recordOf(1)));
    });

    it("stamps a key made without createdAt with the store's instant", async () => {
      clock.now = T0 + 7_000;
      const { createdAt: _, ...made } = recordOf(1);
      expect(await fixture.keys.insert(made)).toEqual({
        state: "inserted",
        record: { ...made, createdAt: T0 + 7_000 },
      });
      expect(await fixture.keys.get("key_1")).toEqual({ ...made, createdAt: T0 + 7_000 });
    });

    it("answers duplicate to a key whose id, secret or previous secret is another's, storing and auditing nothing", async () => {
      await fixture.keys.insert(recordOf(1), CLI);
      await fixture.keys.roll("key_1", hashOf(101), 60_000, ADMIN);
      for (const record of [
        recordOf(2, { id: "key_1" }),
        recordOf(2, { hash: hashOf(101) }),
        recordOf(2, { hash: hashOf(1) }),
      ]) {
        expect(await fixture.keys.insert(record, CLI)).toEqual({ state: "duplicate" });
      }
      expect(await fixture.keys.list()).toHaveLength(1);
      expect(await fixture.keys.get("key_2")).toBeUndefined();
      expect((await fixture.keys.auditTrail({ limit: 10 })).map((entry) => `${entry.action} ${entry.keyId}`)).toEqual([
        "roll key_1",
        "create key_1",
        "create acct_1",
      ]);
    });

    it("answers undefined for a hash no key has", async () => {
      await fixture.keys.insert(recordOf(1));
      expect(await fixture.keys.findByHash(hashOf(2))).toBeUndefined();
    });

    it("leaves optional fields absent, with no key at all, when they were not set", async () => {
      await fixture.keys.insert(recordOf(1));
      const fields = ["accountId", "createdAt", "hash", "id", "plan"];
      expect(Object.keys((await fixture.keys.findByHash(hashOf(1)))!).sort()).toEqual(["account", ...fields]);
      expect(Object.keys((await fixture.keys.findByHash(hashOf(1)))!.account!)).toEqual(["plan"]);
      expect(Object.keys((await fixture.keys.list())[0]!).sort()).toEqual(fields);
    });

    it("keeps every plan, limit override and a Unicode label exactly", async () => {
      const records = [
        recordOf(1, { plan: "enterprise", perMinute: 5_000, perDay: 2_000_000, label: "Ünïcode ✓ label" }),
        recordOf(2, { plan: "pro", perMinute: 1 }),
        recordOf(3, { plan: "business", perDay: 7 }),
        recordOf(4, { plan: "free", label: "" }),
      ];
      for (const record of records) await fixture.keys.insert(record);
      for (const record of records) expect(await fixture.keys.findByHash(record.hash)).toEqual(found(record));
      expect((await fixture.keys.list()).sort(byId)).toEqual(records);
      expect(typeof (await fixture.keys.findByHash(hashOf(1)))!.createdAt).toBe("number");
    });

    it("keeps a key's scopes and allowed ranges, IPv4 and IPv6, with the key in one read", async () => {
      const limited = recordOf(1, {
        scopes: ["pets:read", "orders:read"],
        allowFrom: ["10.0.0.0/8", "2001:db8::/32", "127.0.0.2/32"],
      });
      await fixture.keys.insert(limited);
      expect(await fixture.keys.findByHash(hashOf(1))).toEqual(found(limited));
      expect(await fixture.keys.get("key_1")).toEqual(limited);
      expect(await fixture.keys.list()).toEqual([limited]);
    });

    it("changes a key's scopes and ranges; null gives it every scope and any address again", async () => {
      await fixture.keys.insert(recordOf(1, { allowFrom: ["10.0.0.0/8"] }));
      const limited = await fixture.keys.update(
        "key_1",
        { scopes: ["pets:write"], allowFrom: ["192.0.2.0/24", "::1"] },
        ADMIN,
      );
      const after = recordOf(1, { scopes: ["pets:write"], allowFrom: ["192.0.2.0/24", "::1"] });
      expect(limited).toEqual({ state: "changed", record: after });
      expect(await fixture.keys.findByHash(hashOf(1))).toEqual(found(after));
      const opened = await fixture.keys.update("key_1", { scopes: null, allowFrom: null }, ADMIN);
      expect(opened).toEqual({ state: "changed", record: recordOf(1) });
      expect(await fixture.keys.findByHash(hashOf(1))).toEqual(found(recordOf(1)));
    });

    it("hands out a key's lists as copies: changing one changes nothing stored", async () => {
      await fixture.keys.insert(recordOf(1, { scopes: ["pets:read"], allowFrom: ["10.0.0.0/8"] }));
      const found = (await fixture.keys.findByHash(hashOf(1)))!;
      found.scopes!.push("pets:write");
      found.allowFrom!.push("0.0.0.0/0");
      expect(await fixture.keys.get("key_1")).toMatchObject({ scopes: ["pets:read"], allowFrom: ["10.0.0.0/8"] });
    });

    it("lists nothing when there are no keys", async () => {
      expect(await fixture.keys.list()).toEqual([]);
    });

    it("lists every inserted key", async () => {
      const records = [recordOf(3), recordOf(1), recordOf(2)];
      for (const record of records) await fixture.keys.insert(record);
      expect((await fixture.keys.list()).sort(byId)).toEqual([...records].sort(byId));
    });

    it("revokes a key at the store's instant, seen by findByHash, get and list", async () => {
      await fixture.keys.insert(recordOf(1));
      clock.now = T0 + 5_000;
      expect(await fixture.keys.revoke("key_1")).toEqual({
        state: "changed",
        record: { ...recordOf(1), revokedAt: T0 + 5_000 },
      });
      expect(await fixture.keys.findByHash(hashOf(1))).toEqual(found({ ...recordOf(1), revokedAt: T0 + 5_000 }));
      expect(await fixture.keys.get("key_1")).toEqual({ ...recordOf(1), revokedAt: T0 + 5_000 });
      expect(await fixture.keys.list()).toEqual([{ ...recordOf(1), revokedAt: T0 + 5_000 }]);
    });

    it("answers missing when revoking an id no key has, and changes nothing", async () => {
      await fixture.keys.insert(recordOf(1));
      expect(await fixture.keys.revoke("key_404")).toEqual({ state: "missing" });
      expect(await fixture.keys.list()).toEqual([recordOf(1)]);
    });

    it("keeps the first revocation time when a key is revoked twice, answering revoked", async () => {
      await fixture.keys.insert(recordOf(1));
      clock.now = T0 + 5_000;
      await fixture.keys.revoke("key_1");
      clock.now = T0 + 9_000;
      expect(await fixture.keys.revoke("key_1")).toEqual({
        state: "revoked",
        record: { ...recordOf(1), revokedAt: T0 + 5_000 },
      });
      expect((await fixture.keys.findByHash(hashOf(1)))!.revokedAt).toBe(T0 + 5_000);
    });

    it("revokes only the key it names", async () => {
      await fixture.keys.insert(recordOf(1));
      await fixture.keys.insert(recordOf(2));
      clock.now = T0 + 5_000;
      await fixture.keys.revoke("key_2");
      expect(await fixture.keys.findByHash(hashOf(1))).toEqual(found(recordOf(1)));
      expect((await fixture.keys.findByHash(hashOf(2)))!.revokedAt).toBe(T0 + 5_000);
    });

    it("gets a key by its id, and undefined for an id no key has", async () => {
      await fixture.keys.insert(recordOf(1, { label: "shop", expiresAt: T0 + HOUR }));
      expect(await fixture.keys.get("key_1")).toEqual(recordOf(1, { label: "shop", expiresAt: T0 + HOUR }));
      expect(await fixture.keys.get("key_2")).toBeUndefined();
    });

    it("lists keys in the order they were made, a page at a time", async () => {
      const records = [recordOf(5), recordOf(3), recordOf(9), recordOf(1), recordOf(7)];
      for (const record of records) await fixture.keys.insert(record);
      expect(await fixture.keys.list({ limit: 2 })).toEqual(records.slice(0, 2));
      expect(await fixture.keys.list({ limit: 2, afterId: "key_3" })).toEqual(records.slice(2, 4));
      expect(await fixture.keys.list({ limit: 2, afterId: "key_1" })).toEqual(records.slice(4));
      expect(await fixture.keys.list({ limit: 2, afterId: "key_7" })).toEqual([]);
    });

    it("lists the keys of one plan, and of each state at the store's instant as keyRecordIs says", async () => {
      await fixture.keys.insert(recordOf(1));
      await fixture.keys.insert(recordOf(2, { plan: "pro" }));
      await fixture.keys.insert(recordOf(3, { expiresAt: T0 + HOUR }));
      await fixture.keys.insert(recordOf(4, { plan: "pro" }));
      await fixture.keys.insert(recordOf(5, { plan: "pro", expiresAt: T0 + HOUR }));
      await fixture.keys.insert(recordOf(6));
      await fixture.keys.roll("key_4", hashOf(104), 3 * HOUR, ADMIN);
      await fixture.keys.roll("key_6", hashOf(106), 0, ADMIN);
      await fixture.keys.revoke("key_2");
      await fixture.keys.revoke("key_5");
      clock.now = T0 + 2 * HOUR;
      const all = await fixture.keys.list();
      for (const state of ["live", "rolling", "expired", "revoked"] as const) {
        const expected = all.filter((record) => keyRecordIs(record, state, clock.now)).map((record) => record.id);
        expect((await fixture.keys.list({ limit: 10, state })).map((record) => record.id)).toEqual(expected);
      }
      expect((await fixture.keys.list({ limit: 10, state: "live" })).map((record) => record.id)).toEqual([
        "key_1",
        "key_4",
        "key_6",
      ]);
      expect((await fixture.keys.list({ limit: 10, plan: "pro" })).map((record) => record.id)).toEqual([
        "key_2",
        "key_4",
        "key_5",
      ]);
      expect(await fixture.keys.list({ limit: 10, plan: "pro", state: "expired" })).toEqual([
        await fixture.keys.get("key_5"),
      ]);
      expect((await fixture.keys.list({ limit: 1, afterId: "key_2", plan: "free" }))[0]!.id).toBe("key_3");
    });

    it("lists keys by their last use, the latest first and keys never used last, a page at a time", async () => {
      for (const n of [1, 2, 3, 4, 5]) await fixture.keys.insert(recordOf(n));
      await fixture.keys.addUsage([
        { ...counts(1), keyId: "key_2", minute: T0, lastUsedAt: T0 + 10 },
        { ...counts(1), keyId: "key_4", minute: T0, lastUsedAt: T0 + 30 },
        { ...counts(0, 1), keyId: "key_5", minute: T0, lastUsedAt: T0 + 10 },
      ]);
      const order = ["key_4", "key_2", "key_5", "key_1", "key_3"];
      expect((await fixture.keys.list({ limit: 10, order: "lastUsed" })).map((record) => record.id)).toEqual(order);
      expect(
        (await fixture.keys.list({ limit: 2, afterId: "key_2", order: "lastUsed" })).map((record) => record.id),
      ).toEqual(order.slice(2, 4));
      expect(
        (await fixture.keys.list({ limit: 2, afterId: "key_1", order: "lastUsed" })).map((record) => record.id),
      ).toEqual(["key_3"]);
      expect(await fixture.keys.list({ limit: 2, afterId: "key_404", order: "lastUsed" })).toEqual([]);
    });

    it("lists keys by the requests they had admitted in the store's UTC day, the most first", async () => {
      for (const n of [1, 2, 3, 4]) await fixture.keys.insert(recordOf(n));
      const today = T0 - (T0 % (24 * HOUR));
      await fixture.keys.addUsage([
        { ...counts(5), keyId: "key_3", minute: today },
        { ...counts(9), keyId: "key_2", minute: today - 60_000 },
        { ...counts(1), keyId: "key_2", minute: T0 },
        { ...counts(0, 50, 7, 3), keyId: "key_1", minute: T0 },
        { ...counts(2), keyId: "key_4", minute: today - 60_000 },
      ]);
      const ids = async (query: Omit<KeyListQuery, "limit" | "order">) =>
        (await fixture.keys.list({ limit: 10, order: "today", ...query })).map((record) => record.id);
      expect(await ids({})).toEqual(["key_3", "key_2", "key_1", "key_4"]);
      expect(await ids({ afterId: "key_2" })).toEqual(["key_1", "key_4"]);
      // The next day nothing is admitted yet: the order keys were made in.
      clock.now = today + 24 * HOUR;
      expect(await ids({})).toEqual(["key_1", "key_2", "key_3", "key_4"]);
    });

    it("updates plan, limits, label and expiry, keeping the secret; null removes a field", async () => {
      await fixture.keys.insert(recordOf(1, { plan: "free", label: "trial" }));
      const upgraded = await fixture.keys.update("key_1", { plan: "pro", perMinute: 500, expiresAt: T0 + HOUR }, ADMIN);
      expect(upgraded).toEqual({
        state: "changed",
        record: recordOf(1, { plan: "pro", perMinute: 500, label: "trial", expiresAt: T0 + HOUR }),
      });
      expect(await fixture.keys.findByHash(hashOf(1))).toEqual(
        found(recordOf(1, { plan: "pro", perMinute: 500, label: "trial", expiresAt: T0 + HOUR })),
      );
      const cleared = await fixture.keys.update(
        "key_1",
        { perMinute: null, label: null, expiresAt: null, perDay: 9 },
        ADMIN,
      );
      expect(cleared).toEqual({ state: "changed", record: recordOf(1, { plan: "pro", perDay: 9 }) });
    });

    it("answers missing or revoked to an update it cannot make, changing nothing", async () => {
      await fixture.keys.insert(recordOf(1));
      expect(await fixture.keys.update("key_404", { plan: "pro" }, ADMIN)).toEqual({ state: "missing" });
      await fixture.keys.revoke("key_1");
      expect(await fixture.keys.update("key_1", { plan: "pro" }, ADMIN)).toEqual({
        state: "revoked",
        record: { ...recordOf(1), revokedAt: T0 },
      });
      expect((await fixture.keys.get("key_1"))!.plan).toBe("free");
    });

    it("finds an expired key by its hash, expiry and all: core refuses it, saying it expired", async () => {
      await fixture.keys.insert(recordOf(1, { expiresAt: T0 + HOUR }));
      clock.now = T0 + 2 * HOUR;
      expect(await fixture.keys.findByHash(hashOf(1))).toEqual(found(recordOf(1, { expiresAt: T0 + HOUR })));
    });

    it("rolls a key: the new secret at once, the old one found with the roll that says until when it works", async () => {
      await fixture.keys.insert(recordOf(1));
      clock.now = T0 + 1_000;
      const rolled = await fixture.keys.roll("key_1", hashOf(101), 60_000, ADMIN);
      const expected = recordOf(1, {
        hash: hashOf(101),
        rolled: { previousHash: hashOf(1), at: T0 + 1_000, until: T0 + 61_000 },
      });
      expect(rolled).toEqual({ state: "changed", record: expected });
      expect(await fixture.keys.findByHash(hashOf(101))).toEqual(found(expected));
      clock.now = T0 + 60_999;
      expect(await fixture.keys.findByHash(hashOf(1))).toEqual(found(expected));
      // Past the overlap too: core refuses the old secret, saying it was rolled out.
      clock.now = T0 + 61_000;
      expect(await fixture.keys.findByHash(hashOf(1))).toEqual(found(expected));
      expect(await fixture.keys.findByHash(hashOf(101))).toEqual(found(expected));
    });

    it("ends a roll's overlap at the roll's instant when it has none", async () => {
      await fixture.keys.insert(recordOf(1));
      await fixture.keys.roll("key_1", hashOf(101), 0, ADMIN);
      expect((await fixture.keys.findByHash(hashOf(1)))!.rolled).toEqual({
        previousHash: hashOf(1),
        at: T0,
        until: T0,
      });
      expect((await fixture.keys.findByHash(hashOf(101)))!.id).toBe("key_1");
    });

    it("forgets a secret two rolls back", async () => {
      await fixture.keys.insert(recordOf(1));
      await fixture.keys.roll("key_1", hashOf(101), 0, ADMIN);
      await fixture.keys.roll("key_1", hashOf(102), 0, ADMIN);
      expect(await fixture.keys.findByHash(hashOf(1))).toBeUndefined();
      expect((await fixture.keys.findByHash(hashOf(101)))!.rolled!.previousHash).toBe(hashOf(101));
    });

    it("refuses a roll during the last roll's overlap, and allows one once it ended", async () => {
      await fixture.keys.insert(recordOf(1));
      await fixture.keys.roll("key_1", hashOf(101), 60_000, ADMIN);
      clock.now = T0 + 30_000;
      const refused = await fixture.keys.roll("key_1", hashOf(102), 60_000, ADMIN);
      expect(refused).toMatchObject({
        state: "rolling",
        record: { hash: hashOf(101), rolled: { until: T0 + 60_000 } },
      });
      expect(await fixture.keys.findByHash(hashOf(102))).toBeUndefined();
      clock.now = T0 + 60_000;
      expect(await fixture.keys.roll("key_1", hashOf(102), 5_000, ADMIN)).toMatchObject({
        state: "changed",
        record: { hash: hashOf(102), rolled: { previousHash: hashOf(101) } },
      });
    });

    it("answers missing or revoked to a roll it cannot make", async () => {
      expect(await fixture.keys.roll("key_404", hashOf(101), 0, ADMIN)).toEqual({ state: "missing" });
      await fixture.keys.insert(recordOf(1));
      await fixture.keys.revoke("key_1");
      expect(await fixture.keys.roll("key_1", hashOf(101), 0, ADMIN)).toMatchObject({ state: "revoked" });
      expect(await fixture.keys.findByHash(hashOf(101))).toBeUndefined();
    });

    it("keeps an audit trail of every change with a note, newest first, by key and a page at a time", async () => {
      // Keys of an account made before (unaudited): the trail holds the keys' changes alone.
      await fixture.keys.insertAccount({ id: "acct_shop", name: "Shop", plan: "free" });
      const created = { plan: "free", label: "Ünïcode ✓", expiresAt: "2030-02-01T00:00:00.000Z" };
      await fixture.keys.insert(recordOf(1, { accountId: "acct_shop" }), { ...CLI, details: created });
      await fixture.keys.insert(recordOf(2, { accountId: "acct_shop" }));
      clock.now = T0 + 1_000;
      await fixture.keys.update(
        "key_1",
        { plan: "pro", label: null },
        { ...ADMIN, details: { plan: "pro", label: null } },
      );
      clock.now = T0 + 2_000;
      await fixture.keys.roll("key_1", hashOf(101), 60_000, { ...ADMIN, details: { overlapMs: 60_000 } });
      await fixture.keys.audit("unban", "key_2", ADMIN);
      clock.now = T0 + 3_000;
      await fixture.keys.revoke("key_1", CLI);
      // Changes that changed nothing are not in the trail; nor is a change made without an actor.
      await fixture.keys.revoke("key_1", CLI);
      await fixture.keys.update("key_404", { plan: "pro" }, ADMIN);
      await fixture.keys.revoke("key_2");
      const trail = await fixture.keys.auditTrail({ limit: 10 });
      expect(trail.map(({ action, keyId, at, actor }) => ({ action, keyId, at, actor }))).toEqual([
        { action: "revoke", keyId: "key_1", at: T0 + 3_000, actor: CLI_ACTOR },
        { action: "unban", keyId: "key_2", at: T0 + 2_000, actor: ADMIN_ACTOR },
        { action: "roll", keyId: "key_1", at: T0 + 2_000, actor: ADMIN_ACTOR },
        { action: "update", keyId: "key_1", at: T0 + 1_000, actor: ADMIN_ACTOR },
        { action: "create", keyId: "key_1", at: T0, actor: CLI_ACTOR },
      ]);
      expect(trail[4]!.details).toEqual(created);
      expect(trail[3]!.details).toEqual({ plan: "pro", label: null });
      expect(trail[2]!.details).toEqual({ overlapMs: 60_000 });
      expect(trail[0]!.details).toBeUndefined();
      expect(new Set(trail.map((entry) => entry.id)).size).toBe(5);
      expect(trail.map((entry) => entry.id)).toEqual([...trail.map((entry) => entry.id)].sort((a, b) => b - a));
      expect(await fixture.keys.auditTrail({ limit: 2 })).toEqual(trail.slice(0, 2));
      expect(await fixture.keys.auditTrail({ limit: 2, beforeId: trail[1]!.id })).toEqual(trail.slice(2, 4));
      expect((await fixture.keys.auditTrail({ limit: 10, keyId: "key_2" })).map((entry) => entry.action)).toEqual([
        "unban",
      ]);
      expect(JSON.stringify(trail)).not.toContain(hashOf(101));
    });

    it("keeps the trail's entries of one action, of one actor, or both, newest first and a page at a time", async () => {
      await fixture.keys.insertAccount({ id: "acct_shop", name: "Shop", plan: "free" });
      await fixture.keys.insert(recordOf(1, { accountId: "acct_shop" }), CLI);
      await fixture.keys.insert(recordOf(2, { accountId: "acct_shop" }), ADMIN);
      await fixture.keys.update("key_1", { label: "a" }, ADMIN);
      await fixture.keys.update("key_2", { label: "b" }, CLI);
      await fixture.keys.update("key_2", { label: "c" }, ADMIN);
      const shown = (entries: AuditEntry[]) => entries.map(({ action, keyId }) => `${action} ${keyId}`);
      expect(shown(await fixture.keys.auditTrail({ limit: 10, action: "create" }))).toEqual([
        "create key_2",
        "create key_1",
      ]);
      expect(shown(await fixture.keys.auditTrail({ limit: 10, actor: ADMIN_ACTOR.who }))).toEqual([
        "update key_2",
        "update key_1",
        "create key_2",
      ]);
      const updates = await fixture.keys.auditTrail({ limit: 10, action: "update", actor: ADMIN_ACTOR.who });
      expect(shown(updates)).toEqual(["update key_2", "update key_1"]);
      expect(
        shown(
          await fixture.keys.auditTrail({
            limit: 1,
            action: "update",
            actor: ADMIN_ACTOR.who,
            beforeId: updates[0]!.id,
          }),
        ),
      ).toEqual(["update key_1"]);
      expect(await fixture.keys.auditTrail({ limit: 10, action: "roll", keyId: "key_1" })).toEqual([]);
      expect(await fixture.keys.auditTrail({ limit: 10, actor: "admin:tok_" })).toEqual([]);
    });
  });

  describeOnMovedClock(`ApiKeys contract: ${name}, accounts`, T0, make, (fixture, clock) => {
    const PRO: AccountRecord = { id: "acct_shop", name: "Shop", plan: "pro", createdAt: T0 };
    const intoShop = (n: number, extra: Partial<ApiKeyRecord> = {}) =>
      recordOf(n, { accountId: "acct_shop", ...extra });

    it("stores an account, reads it back and lists accounts in the order they were made", async () => {
      const enterprise = {
        id: "acct_big",
        name: "Big Co",
        plan: "enterprise",
        perMinute: 5_000,
        perDay: 900_000,
      } as const;
      expect(await fixture.keys.insertAccount(PRO, CLI)).toEqual({ state: "inserted", record: PRO });
      clock.now = T0 + 1;
      expect(await fixture.keys.insertAccount(enterprise)).toEqual({
        state: "inserted",
        record: { ...enterprise, createdAt: T0 + 1 },
      });
      expect(await fixture.keys.getAccount("acct_big")).toEqual({ ...enterprise, createdAt: T0 + 1 });
      expect(await fixture.keys.getAccount("acct_none")).toBeUndefined();
      expect((await fixture.keys.listAccounts()).map((a) => a.id)).toEqual(["acct_shop", "acct_big"]);
      expect((await fixture.keys.listAccounts({ limit: 5, afterId: "acct_shop" })).map((a) => a.id)).toEqual([
        "acct_big",
      ]);
    });

    it("lists the accounts of one plan, a page at a time", async () => {
      await fixture.keys.insertAccount(PRO);
      await fixture.keys.insertAccount({ id: "acct_a", name: "A", plan: "free" });
      await fixture.keys.insertAccount({ id: "acct_b", name: "B", plan: "pro" });
      await fixture.keys.insertAccount({ id: "acct_c", name: "C", plan: "pro" });
      const ids = async (page: Parameters<typeof fixture.keys.listAccounts>[0]) =>
        (await fixture.keys.listAccounts(page)).map((account) => account.id);
      expect(await ids({ limit: 10, plan: "pro" })).toEqual(["acct_shop", "acct_b", "acct_c"]);
      expect(await ids({ limit: 1, plan: "pro", afterId: "acct_shop" })).toEqual(["acct_b"]);
      expect(await ids({ limit: 10, plan: "free", afterId: "acct_b" })).toEqual([]);
      expect(await ids({ limit: 2 })).toEqual(["acct_shop", "acct_a"]);
      expect(await ids({ limit: 2, afterId: "acct_none" })).toEqual([]);
    });

    it("counts each account's keys, revoked ones too, and none for an account without keys or none at all", async () => {
      await fixture.keys.insertAccount(PRO);
      await fixture.keys.insertAccount({ id: "acct_empty", name: "Empty", plan: "free" });
      await fixture.keys.insert(intoShop(1, { plan: "pro" }));
      await fixture.keys.insert(intoShop(2, { plan: "pro" }));
      await fixture.keys.insert(recordOf(3));
      await fixture.keys.revoke("key_2");
      expect(await fixture.keys.countKeys(["acct_shop", "acct_empty", "acct_3", "acct_none"])).toEqual({
        acct_shop: 2,
        acct_empty: 0,
        acct_3: 1,
        acct_none: 0,
      });
      expect(await fixture.keys.countKeys([])).toEqual({});
    });

    it("lists the keys of one account, with the other filters and a page at a time", async () => {
      await fixture.keys.insertAccount(PRO);
      await fixture.keys.insert(intoShop(1, { plan: "pro" }));
      await fixture.keys.insert(recordOf(2));
      await fixture.keys.insert(intoShop(3, { plan: "pro" }));
      await fixture.keys.insert(intoShop(4, { plan: "free", ownLimits: true }));
      await fixture.keys.revoke("key_3");
      const ids = async (query: Parameters<typeof fixture.keys.list>[0]) =>
        (await fixture.keys.list(query)).map((record) => record.id);
      expect(await ids({ limit: 10, accountId: "acct_shop" })).toEqual(["key_1", "key_3", "key_4"]);
      expect(await ids({ limit: 1, accountId: "acct_shop", afterId: "key_1" })).toEqual(["key_3"]);
      expect(await ids({ limit: 10, accountId: "acct_shop", state: "live", plan: "pro" })).toEqual(["key_1"]);
      expect(await ids({ limit: 10, accountId: "acct_2" })).toEqual(["key_2"]);
      expect(await ids({ limit: 10, accountId: "acct_none" })).toEqual([]);
    });

    it("answers duplicate to an account whose id is taken, changing nothing", async () => {
      await fixture.keys.insertAccount(PRO);
      expect(await fixture.keys.insertAccount({ ...PRO, name: "Other", plan: "free" }, CLI)).toEqual({
        state: "duplicate",
      });
      expect(await fixture.keys.getAccount("acct_shop")).toEqual(PRO);
      expect(await fixture.keys.auditTrail({ limit: 10 })).toEqual([]);
    });

    it("makes a key without an account one of its own, with its plan and limits, named after its label", async () => {
      await fixture.keys.insert(recordOf(1, { plan: "enterprise", perMinute: 700, perDay: 9_000, label: "ci" }));
      expect(await fixture.keys.getAccount(ownAccountId("key_1"))).toEqual({
        id: "acct_1",
        name: "ci",
        plan: "enterprise",
        perMinute: 700,
        perDay: 9_000,
        createdAt: T0 + 1,
      });
    });

    it("puts a key into an account that exists, and finds it with the account's plan and limits in one read", async () => {
      await fixture.keys.insertAccount({ ...PRO, perMinute: 400 });
      const key = intoShop(1, { plan: "pro", perMinute: 10, ownLimits: true });
      expect(await fixture.keys.insert(key)).toEqual({ state: "inserted", record: key });
      expect(await fixture.keys.findByHash(hashOf(1))).toEqual({
        ...key,
        account: { plan: "pro", perMinute: 400 },
      });
    });

    it("keeps an account's ranges, IPv4 and IPv6, and finds them with each of its keys in one read", async () => {
      const limited = { ...PRO, allowFrom: ["10.0.0.0/8", "2001:db8::/32", "127.0.0.2/32"] };
      expect(await fixture.keys.insertAccount(limited)).toEqual({ state: "inserted", record: limited });
      await fixture.keys.insert(intoShop(1, { plan: "pro", allowFrom: ["10.1.0.0/16"] }));
      expect(await fixture.keys.getAccount("acct_shop")).toEqual(limited);
      expect(await fixture.keys.listAccounts()).toEqual([limited]);
      expect(await fixture.keys.findByHash(hashOf(1))).toEqual({
        ...intoShop(1, { plan: "pro", allowFrom: ["10.1.0.0/16"] }),
        account: { plan: "pro", allowFrom: ["10.0.0.0/8", "2001:db8::/32", "127.0.0.2/32"] },
      });
    });

    it("changes an account's ranges, its keys finding the new ones; null lets them in from any address again", async () => {
      await fixture.keys.insertAccount({ ...PRO, allowFrom: ["10.0.0.0/8"] });
      await fixture.keys.insert(intoShop(1, { plan: "pro", allowFrom: ["10.1.0.0/16"] }));
      const changed = await fixture.keys.updateAccount("acct_shop", { allowFrom: ["192.0.2.0/24", "::1"] }, ADMIN);
      expect(changed).toEqual({ state: "changed", record: { ...PRO, allowFrom: ["192.0.2.0/24", "::1"] } });
      expect((await fixture.keys.findByHash(hashOf(1)))!.account).toEqual({
        plan: "pro",
        allowFrom: ["192.0.2.0/24", "::1"],
      });
      expect(await fixture.keys.updateAccount("acct_shop", { allowFrom: null }, ADMIN)).toEqual({
        state: "changed",
        record: PRO,
      });
      const found = await fixture.keys.findByHash(hashOf(1));
      expect(found!.account).toEqual({ plan: "pro" });
      expect(found!.allowFrom).toEqual(["10.1.0.0/16"]);
    });

    it("keeps an account's ranges through a change of its plan, and gives them to no key's own", async () => {
      await fixture.keys.insertAccount({ ...PRO, allowFrom: ["10.0.0.0/8"] });
      await fixture.keys.insert(intoShop(1, { plan: "pro" }));
      await fixture.keys.updateAccount("acct_shop", { plan: "business", name: "Shop Inc" }, ADMIN);
      expect(await fixture.keys.getAccount("acct_shop")).toEqual({
        ...PRO,
        name: "Shop Inc",
        plan: "business",
        allowFrom: ["10.0.0.0/8"],
      });
      expect(await fixture.keys.get("key_1")).toEqual(intoShop(1, { plan: "business" }));
    });

    it("hands out an account's ranges as copies: changing one changes nothing stored", async () => {
      await fixture.keys.insertAccount({ ...PRO, allowFrom: ["10.0.0.0/8"] });
      await fixture.keys.insert(intoShop(1, { plan: "pro" }));
      (await fixture.keys.getAccount("acct_shop"))!.allowFrom!.push("0.0.0.0/0");
      (await fixture.keys.findByHash(hashOf(1)))!.account!.allowFrom!.push("0.0.0.0/0");
      expect((await fixture.keys.getAccount("acct_shop"))!.allowFrom).toEqual(["10.0.0.0/8"]);
      expect((await fixture.keys.findByHash(hashOf(1)))!.account!.allowFrom).toEqual(["10.0.0.0/8"]);
    });

    it("lists the keys of one account, a page at a time", async () => {
      await fixture.keys.insertAccount(PRO);
      for (const n of [1, 2, 3, 4]) await fixture.keys.insert(n % 2 === 0 ? intoShop(n) : recordOf(n));
      const ids = async (page: { limit: number; afterId?: string }) =>
        (await fixture.keys.list({ ...page, accountId: "acct_shop" })).map((record) => record.id);
      expect(await ids({ limit: 10 })).toEqual(["key_2", "key_4"]);
      expect(await ids({ limit: 1, afterId: "key_2" })).toEqual(["key_4"]);
      expect((await fixture.keys.list({ limit: 10, accountId: "acct_1" })).map((record) => record.id)).toEqual([
        "key_1",
      ]);
    });

    it("answers no_account to a key of an account that does not exist, storing nothing", async () => {
      expect(await fixture.keys.insert(recordOf(1, { accountId: "acct_none" }))).toEqual({ state: "no_account" });
      expect(await fixture.keys.get("key_1")).toBeUndefined();
      expect(await fixture.keys.listAccounts()).toEqual([]);
    });

    it("changes an account: the keys that follow it read its new plan and limits, a key with caps of its own keeps them", async () => {
      await fixture.keys.insertAccount(PRO);
      await fixture.keys.insert(intoShop(1, { plan: "free" }));
      await fixture.keys.insert(intoShop(2, { plan: "pro", perMinute: 10, ownLimits: true }));
      expect(await fixture.keys.get("key_1")).toEqual(intoShop(1, { plan: "pro" }));
      const changed = await fixture.keys.updateAccount(
        "acct_shop",
        { name: "Shop Inc", plan: "enterprise", perMinute: 2_000, perDay: 50_000 },
        ADMIN,
      );
      const after = { ...PRO, name: "Shop Inc", plan: "enterprise", perMinute: 2_000, perDay: 50_000 } as const;
      expect(changed).toEqual({ state: "changed", record: after });
      expect(await fixture.keys.get("key_1")).toEqual(
        intoShop(1, { plan: "enterprise", perMinute: 2_000, perDay: 50_000 }),
      );
      expect(await fixture.keys.get("key_2")).toEqual(intoShop(2, { plan: "pro", perMinute: 10, ownLimits: true }));
      expect((await fixture.keys.findByHash(hashOf(2)))!.account).toEqual({
        plan: "enterprise",
        perMinute: 2_000,
        perDay: 50_000,
      });
      expect((await fixture.keys.list({ limit: 10, plan: "enterprise" })).map((key) => key.id)).toEqual(["key_1"]);
    });

    it("changes the account made for a key when the key that follows it changes plan: every key following it moves", async () => {
      await fixture.keys.insert(recordOf(1));
      await fixture.keys.insert(recordOf(2, { accountId: "acct_1" }));
      const changed = await fixture.keys.update("key_1", { plan: "pro" }, ADMIN);
      expect(changed).toEqual({ state: "changed", record: recordOf(1, { plan: "pro" }) });
      expect(await fixture.keys.get("key_2")).toEqual(recordOf(2, { accountId: "acct_1", plan: "pro" }));
      expect(await fixture.keys.getAccount("acct_1")).toMatchObject({ plan: "pro" });
    });

    it("keeps a key's own caps through its account's changes, also when they equal the account's", async () => {
      await fixture.keys.insertAccount(PRO);
      await fixture.keys.insert(intoShop(1, { plan: "free", ownLimits: true }));
      await fixture.keys.updateAccount("acct_shop", { plan: "free" }, ADMIN);
      await fixture.keys.updateAccount("acct_shop", { plan: "pro" }, ADMIN);
      expect(await fixture.keys.get("key_1")).toEqual(intoShop(1, { plan: "free", ownLimits: true }));
    });

    it("gives a key of a shared account caps of its own on a change: the account's plan and limits of the moment under the ones given, kept", async () => {
      await fixture.keys.insertAccount({ ...PRO, perDay: 20_000 });
      await fixture.keys.insert(intoShop(1));
      await fixture.keys.insert(intoShop(2));
      await fixture.keys.update("key_1", { perMinute: 10 }, ADMIN);
      // A plan given starts from that plan's limits, not the account's own numbers.
      await fixture.keys.update("key_2", { plan: "free" }, ADMIN);
      await fixture.keys.updateAccount("acct_shop", { plan: "business", perDay: null }, ADMIN);
      const capped = intoShop(1, { plan: "pro", perMinute: 10, perDay: 20_000, ownLimits: true });
      expect(await fixture.keys.get("key_1")).toEqual(capped);
      expect(await fixture.keys.get("key_2")).toEqual(intoShop(2, { plan: "free", ownLimits: true }));
      expect(await fixture.keys.getAccount("acct_shop")).toEqual({ ...PRO, plan: "business" });
    });

    it("lets a key with caps of its own follow its account again", async () => {
      await fixture.keys.insertAccount(PRO);
      await fixture.keys.insert(intoShop(1, { plan: "free", perMinute: 5, ownLimits: true }));
      const changed = await fixture.keys.update("key_1", { followAccount: true }, ADMIN);
      expect(changed).toEqual({ state: "changed", record: intoShop(1, { plan: "pro" }) });
      await fixture.keys.updateAccount("acct_shop", { plan: "business" }, ADMIN);
      expect((await fixture.keys.findByHash(hashOf(1)))!.plan).toBe("business");
    });

    it("removes an account's limits with null, back to its plan's", async () => {
      await fixture.keys.insertAccount({ ...PRO, perMinute: 400, perDay: 20_000 });
      expect(await fixture.keys.updateAccount("acct_shop", { perMinute: null }, ADMIN)).toEqual({
        state: "changed",
        record: { ...PRO, perDay: 20_000 },
      });
    });

    it("answers missing to a change of an account that does not exist", async () => {
      expect(await fixture.keys.updateAccount("acct_none", { plan: "free" }, ADMIN)).toEqual({ state: "missing" });
      expect(await fixture.keys.auditTrail({ limit: 10 })).toEqual([]);
    });

    it("changes the account made for a key with the key's plan and limits", async () => {
      await fixture.keys.insert(recordOf(1));
      await fixture.keys.insert(recordOf(2, { accountId: "acct_1" }));
      await fixture.keys.update("key_1", { plan: "business", perDay: 12_345 }, ADMIN);
      expect(await fixture.keys.getAccount("acct_1")).toMatchObject({ plan: "business", perDay: 12_345 });
      await fixture.keys.update("key_2", { plan: "free", perMinute: 3 }, ADMIN);
      expect(await fixture.keys.getAccount("acct_1")).toMatchObject({ plan: "business", perDay: 12_345 });
      expect((await fixture.keys.getAccount("acct_1"))!.perMinute).toBeUndefined();
    });

    it("records the account made for a key under the account's id, with the key's actor", async () => {
      const created = { plan: "pro", perMinute: 500, label: "ci" } as const;
      await fixture.keys.insert(recordOf(1, created), { actor: CLI_ACTOR, details: { ...created } });
      await fixture.keys.insertAccount(PRO);
      await fixture.keys.insert(intoShop(2), { actor: CLI_ACTOR, details: { plan: "free" } });
      const trail = await fixture.keys.auditTrail({ limit: 10, keyId: "acct_1" });
      expect(trail.map(({ action, actor, details }) => ({ action, actor, details }))).toEqual([
        { action: "create", actor: CLI_ACTOR, details: { name: "ci", plan: "pro", perMinute: 500 } },
      ]);
      expect(await fixture.keys.auditTrail({ limit: 10, keyId: "acct_shop" })).toEqual([]);
    });

    it("records the change a key's update makes to the account made for it under the account's id", async () => {
      await fixture.keys.insert(recordOf(1));
      await fixture.keys.update("key_1", { label: "only a label" }, { actor: ADMIN_ACTOR, details: { label: "x" } });
      clock.now = T0 + 7;
      const changes = { plan: "business", perDay: 12_345, label: "bigger" } as const;
      await fixture.keys.update("key_1", changes, { actor: ADMIN_ACTOR, details: { ...changes } });
      const trail = await fixture.keys.auditTrail({ limit: 10, keyId: "acct_1" });
      expect(trail.map(({ action, at, actor, details }) => ({ action, at, actor, details }))).toEqual([
        { action: "update", at: T0 + 7, actor: ADMIN_ACTOR, details: { plan: "business", perDay: 12_345 } },
      ]);
    });

    it("records every account change in the audit trail, with the account's id", async () => {
      await fixture.keys.insertAccount(PRO, CLI);
      clock.now = T0 + 9;
      await fixture.keys.updateAccount(
        "acct_shop",
        { plan: "business" },
        { actor: ADMIN_ACTOR, details: { plan: "business" } },
      );
      const trail = await fixture.keys.auditTrail({ limit: 10, keyId: "acct_shop" });
      expect(trail.map(({ action, at, actor, details }) => ({ action, at, actor, details }))).toEqual([
        { action: "update", at: T0 + 9, actor: ADMIN_ACTOR, details: { plan: "business" } },
        { action: "create", at: T0, actor: CLI_ACTOR, details: undefined },
      ]);
    });
  });

  describeWithFixture(
    `ApiKeys contract: ${name}, on its store's own clock`,
    () => make(undefined),
    (fixture) => {
      it("stamps a key's creation, a roll, its overlap and the trail with the store's clock", async () => {
        const { createdAt: _, ...made } = recordOf(1);
        const before = Date.now();
        const inserted = await fixture.keys.insert(made);
        expect(Math.abs((inserted as { record: ApiKeyRecord }).record.createdAt - before)).toBeLessThan(5_000);
        const rolled = await fixture.keys.roll("key_1", hashOf(101), HOUR, ADMIN);
        expect(rolled.state).toBe("changed");
        const { rolled: roll } = (rolled as { record: ApiKeyRecord }).record;
        // The stores of these suites run on this machine: their clock is this one, give or take a request.
        expect(Math.abs(roll!.at - before)).toBeLessThan(5_000);
        expect(roll!.until).toBe(roll!.at + HOUR);
        expect((await fixture.keys.findByHash(hashOf(1)))!.id).toBe("key_1");
        const [entry] = await fixture.keys.auditTrail({ limit: 1 });
        expect(Math.abs(entry!.at - roll!.at)).toBeLessThan(5_000);
      });
    },
  );
}
