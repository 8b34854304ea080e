import { describe, expect, it } from "vitest";
import type { ApiKeyRecord } from "../ports.js";
import { lapse } from "./lapse.js";

const caller: ApiKeyRecord = { id: "key_a", accountId: "acct_a", hash: "0".repeat(64), plan: "free", createdAt: 0 };

describe("lapse", () => {
  it("refuses an expired key from its expiry on, at the limiter's instant, cached or not", () => {
    const expiring = { ...caller, expiresAt: 5_000 };
    expect(lapse({ caller: expiring, keyCache: "hit" }, 4_999)).toEqual({ caller: expiring, keyCache: "hit" });
    expect(lapse({ caller: expiring, keyCache: "hit" }, 5_000)).toEqual({
      caller: undefined,
      sentKey: true,
      keyCache: "hit",
      refused: { keyId: "key_a", reason: "expired" },
    });
    expect(lapse({ caller: expiring, keyCache: "miss" }, 9_000_000)).toMatchObject({
      refused: { keyId: "key_a", reason: "expired" },
    });
  });

  it("lets a rolled key's old secret through until the overlap ends, and its new one after", () => {
    const rolled = { ...caller, rolled: { previousHash: "1".repeat(64), at: 1_000, until: 61_000 } };
    expect(lapse({ caller: rolled, keyCache: "miss", oldSecret: true }, 60_999).caller).toBe(rolled);
    expect(lapse({ caller: rolled, keyCache: "miss", oldSecret: true }, 61_000)).toEqual({
      caller: undefined,
      sentKey: true,
      keyCache: "miss",
      refused: { keyId: "key_a", reason: "rolled_out" },
    });
    expect(lapse({ caller: rolled, keyCache: "miss" }, 61_000).caller).toBe(rolled);
  });

  it("leaves an identity without a caller as it is", () => {
    const nobody = { caller: undefined, sentKey: false } as const;
    expect(lapse(nobody, 0)).toBe(nobody);
  });
});
