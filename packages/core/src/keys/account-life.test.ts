import { memoryKeys } from "@petstore/adapters/memory";
import { beforeEach, describe, expect, it } from "vitest";
import type { AccountRecord, ApiKeys } from "../ports.js";
import { createAccount, updateAccount } from "./account-life.js";
import { KeyRuleError } from "./rules.js";

const T0 = Date.UTC(2030, 0, 15, 12);
const ACTOR = { who: "cli:ops@vm1" };
const ruleBroken = (path: string, message: string) =>
  expect.objectContaining({ name: KeyRuleError.name, details: [{ path, message }] });

describe("account life: an account's ranges", () => {
  let keys: ApiKeys;
  let shop: AccountRecord;
  beforeEach(async () => {
    keys = memoryKeys({ clock: () => T0 });
    shop = await createAccount(
      keys,
      { name: "Shop", plan: "pro", allowFrom: ["10.0.0.0/8", "2001:db8::/32"] },
      { actor: ACTOR },
    );
  });

  it("makes an account with its ranges, audited with them", async () => {
    expect(await keys.getAccount(shop.id)).toMatchObject({ allowFrom: ["10.0.0.0/8", "2001:db8::/32"] });
    const [created] = await keys.auditTrail({ limit: 1, keyId: shop.id });
    expect(created!.details).toMatchObject({ allowFrom: ["10.0.0.0/8", "2001:db8::/32"] });
  });

  it("refuses a new account's malformed range, or a prefix past /32 or /128, naming allowFrom", async () => {
    const refused = (allowFrom: string[]) => createAccount(keys, { name: "Other", plan: "free", allowFrom });
    await expect(refused(["10.0.0/8"])).rejects.toThrow(
      ruleBroken("allowFrom", "must be CIDR ranges: '10.0.0/8' is not an IP address or CIDR range"),
    );
    await expect(refused(["10.0.0.0/33"])).rejects.toThrow(
      ruleBroken(
        "allowFrom",
        "must be CIDR ranges: '10.0.0.0/33' has a prefix past /32, the longest an IPv4 range has",
      ),
    );
    await expect(refused(["2001:db8::/129"])).rejects.toThrow(
      ruleBroken(
        "allowFrom",
        "must be CIDR ranges: '2001:db8::/129' has a prefix past /128, the longest an IPv6 range has",
      ),
    );
    expect(await keys.listAccounts()).toEqual([shop]);
  });

  it("changes an account's ranges, and clears them with null", async () => {
    const changed = await updateAccount(keys, shop.id, { allowFrom: ["192.0.2.0/24"] }, ACTOR);
    expect(changed).toMatchObject({ state: "changed", record: { allowFrom: ["192.0.2.0/24"] } });
    const cleared = await updateAccount(keys, shop.id, { allowFrom: null }, ACTOR);
    expect(cleared.state === "changed" && cleared.record.allowFrom).toBeUndefined();
  });

  it("refuses a change to ranges that are none or malformed, changing nothing", async () => {
    await expect(updateAccount(keys, shop.id, { allowFrom: [] }, ACTOR)).rejects.toThrow(
      ruleBroken("allowFrom", "must be 1 to 100 CIDR ranges such as 10.0.0.0/8 or 2001:db8::/32"),
    );
    await expect(updateAccount(keys, shop.id, { allowFrom: ["::/129"] }, ACTOR)).rejects.toThrow(
      ruleBroken("allowFrom", "must be CIDR ranges: '::/129' has a prefix past /128, the longest an IPv6 range has"),
    );
    expect(await keys.getAccount(shop.id)).toEqual(shop);
  });
});
