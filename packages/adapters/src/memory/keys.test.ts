import { describe, expect, it } from "vitest";
import { memoryKeys } from "./keys.js";

const T0 = Date.UTC(2030, 0, 15, 12, 0, 0);
const key = (n: number, accountId?: string) => ({
  id: `key_${n}`,
  hash: String(n).padStart(64, "0"),
  plan: "free" as const,
  createdAt: T0,
  ...(accountId !== undefined && { accountId }),
});

describe("memoryKeys", () => {
  it("holds the accounts it is given, with the keys that name them", async () => {
    const keys = memoryKeys({ accounts: [{ id: "acct_x", name: "X", plan: "pro" }], keys: [key(1, "acct_x")] });
    expect((await keys.get("key_1"))!.accountId).toBe("acct_x");
    expect(await keys.getAccount("acct_x")).toMatchObject({ name: "X", plan: "pro" });
  });

  it("refuses a key that names an account it is not given, instead of dropping the key", () => {
    expect(() => memoryKeys({ keys: [key(1, "acct_x")] })).toThrow(
      "memoryKeys: the key key_1 is in the account acct_x, which accounts does not give",
    );
  });

  it("refuses a key given twice", () => {
    expect(() => memoryKeys({ keys: [key(1), key(1)] })).toThrow("memoryKeys: the key key_1 repeats");
  });
});
