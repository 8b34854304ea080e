import { expect, it } from "vitest";
import { type Closable, describeOnMovedClock, describeWithFixture } from "./_fixture.js";
import { issueAdminToken, verifyAdminToken } from "../admin/tokens.js";
import type { AdminTokens } from "../ports.js";

/** A fresh admin token store with no tokens. */
export interface AdminTokensFixture extends Closable {
  tokens: AdminTokens;
}

/**
 * The `AdminTokens` contract: insert (stamped with the store's instant), get, list, revoke
 * (the first time kept), and the tokens `issueAdminToken` makes verified by
 * `verifyAdminToken` until revoked. `make` gets the clock its store must use (its `clock`
 * option), or undefined for the store's own.
 * @example adminTokensContract("memory", async (clock) => ({ tokens: memoryAdminTokens({ clock }) }));
 */
export function adminTokensContract(
  name: string,
  make: (clock: (() => number) | undefined) => Promise<AdminTokensFixture>,
): void {
  describeOnMovedClock(`AdminTokens contract: ${name}`, 1_000, make, (fixture, clock) => {
    it("stores a token's hash, never the token, and verifies the token until it is revoked", async () => {
      const { token, record } = await issueAdminToken(fixture.tokens, { label: "ops laptop" });
      expect(token).toMatch(/^psa_[0-9A-Za-z]{44}$/);
      expect(await fixture.tokens.get(record.id)).toEqual(record);
      expect(JSON.stringify(await fixture.tokens.list())).not.toContain(token.slice(4));
      expect(await verifyAdminToken(fixture.tokens, token)).toEqual(record);
      expect(await fixture.tokens.revoke(record.id)).toBe("revoked");
      expect(await verifyAdminToken(fixture.tokens, token)).toBeUndefined();
      const revokedAt = (await fixture.tokens.get(record.id))!.revokedAt;
      expect(typeof revokedAt).toBe("number");
      expect(await fixture.tokens.revoke(record.id)).toBe("already_revoked");
      expect((await fixture.tokens.get(record.id))!.revokedAt).toBe(revokedAt);
      expect(await fixture.tokens.revoke("tok_unknown")).toBe("missing");
    });

    it("refuses a token whose secret differs, a malformed one and an API key", async () => {
      const { token } = await issueAdminToken(fixture.tokens);
      const last = token.at(-1) === "a" ? "b" : "a";
      expect(await verifyAdminToken(fixture.tokens, token.slice(0, -1) + last)).toBeUndefined();
      expect(await verifyAdminToken(fixture.tokens, token.slice(0, -1))).toBeUndefined();
      expect(await verifyAdminToken(fixture.tokens, `psk_${token.slice(4)}`)).toBeUndefined();
    });

    it("lists the tokens in the order they were made, each made at the store's instant, without a label when none was given", async () => {
      const first = await issueAdminToken(fixture.tokens, { label: "first" });
      clock.now = 2_000;
      const second = await issueAdminToken(fixture.tokens, {});
      expect([first.record.createdAt, second.record.createdAt]).toEqual([1_000, 2_000]);
      expect(await fixture.tokens.list()).toEqual([first.record, second.record]);
      expect(Object.keys(second.record).sort()).toEqual(["createdAt", "hash", "id"]);
    });
  });

  describeWithFixture(
    `AdminTokens contract: ${name}, on its store's own clock`,
    () => make(undefined),
    (fixture) => {
      it("stamps a token's creation with the store's clock", async () => {
        const before = Date.now();
        const { record } = await issueAdminToken(fixture.tokens);
        // The stores of these suites run on this machine: their clock is this one, give or take a request.
        expect(Math.abs(record.createdAt - before)).toBeLessThan(5_000);
        expect(await fixture.tokens.get(record.id)).toEqual(record);
      });
    },
  );
}
