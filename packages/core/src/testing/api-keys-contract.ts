import { expect, it } from "vitest";
import { type Closable, describeWithFixture } from "./_fixture.js";
import type { ApiKeyRecord, ApiKeys } from "../ports.js";

/** A fresh key store with no keys. */
export interface KeysFixture extends Closable {
  keys: ApiKeys;
}

const T0 = Date.UTC(2030, 0, 15, 12, 0, 0);
const hashOf = (n: number) => n.toString(16).padStart(64, "0");
const recordOf = (n: number, extra: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id: `key_${n}`,
  hash: hashOf(n),
  plan: "free",
  createdAt: T0 + n,
  ...extra,
});
const byId = (a: ApiKeyRecord, b: ApiKeyRecord) => a.id.localeCompare(b.id);

/**
 * The `ApiKeys` contract: insert, find by hash, list, revoke (false for an unknown id, the
 * first time kept), and optional fields that stay absent when they were not set.
 * @example apiKeysContract("memory", async () => ({ keys: memoryKeys() }));
 */
export function apiKeysContract(name: string, make: () => Promise<KeysFixture>): void {
  describeWithFixture(`ApiKeys contract: ${name}`, make, (fixture) => {

    it("finds an inserted key by its hash", async () => {
      await fixture.keys.insert(recordOf(1));
      expect(await fixture.keys.findByHash(hashOf(1))).toEqual(recordOf(1));
    });

    it("answers undefined for a hash no key has", async () => {
      await fixture.keys.insert(recordOf(1));
      expect(await fixture.keys.findByHash(hashOf(2))).toBeUndefined();
    });

    it("leaves optional fields absent, with no key at all, when they were not set", async () => {
      await fixture.keys.insert(recordOf(1));
      const fields = ["createdAt", "hash", "id", "plan"];
      expect(Object.keys((await fixture.keys.findByHash(hashOf(1)))!).sort()).toEqual(fields);
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
      for (const record of records) expect(await fixture.keys.findByHash(record.hash)).toEqual(record);
      expect((await fixture.keys.list()).sort(byId)).toEqual(records);
      expect(typeof (await fixture.keys.findByHash(hashOf(1)))!.createdAt).toBe("number");
    });

    it("lists nothing when there are no keys", async () => {
      expect(await fixture.keys.list()).toEqual([]);
    });

    it("lists every inserted key", async () => {
      const records = [recordOf(3), recordOf(1), recordOf(2)];
      for (const record of records) await fixture.keys.insert(record);
      expect((await fixture.keys.list()).sort(byId)).toEqual([...records].sort(byId));
    });

    it("revokes a key at the given time, seen by findByHash and list", async () => {
      await fixture.keys.insert(recordOf(1));
      expect(await fixture.keys.revoke("key_1", T0 + 5_000)).toBe(true);
      expect(await fixture.keys.findByHash(hashOf(1))).toEqual({ ...recordOf(1), revokedAt: T0 + 5_000 });
      expect(await fixture.keys.list()).toEqual([{ ...recordOf(1), revokedAt: T0 + 5_000 }]);
    });

    it("answers false when revoking an id no key has, and changes nothing", async () => {
      await fixture.keys.insert(recordOf(1));
      expect(await fixture.keys.revoke("key_404", T0)).toBe(false);
      expect(await fixture.keys.list()).toEqual([recordOf(1)]);
    });

    it("keeps the first revocation time when a key is revoked twice", async () => {
      await fixture.keys.insert(recordOf(1));
      await fixture.keys.revoke("key_1", T0 + 5_000);
      expect(await fixture.keys.revoke("key_1", T0 + 9_000)).toBe(true);
      expect((await fixture.keys.findByHash(hashOf(1)))!.revokedAt).toBe(T0 + 5_000);
    });

    it("revokes only the key it names", async () => {
      await fixture.keys.insert(recordOf(1));
      await fixture.keys.insert(recordOf(2));
      await fixture.keys.revoke("key_2", T0 + 5_000);
      expect(await fixture.keys.findByHash(hashOf(1))).toEqual(recordOf(1));
      expect((await fixture.keys.findByHash(hashOf(2)))!.revokedAt).toBe(T0 + 5_000);
    });
  });
}
