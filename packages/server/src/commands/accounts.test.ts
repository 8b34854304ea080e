import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ownAccountId } from "@petstore/core";
import { cliOn } from "../../../../test/_support/cli-in-process.js";

const dir = mkdtempSync(join(tmpdir(), "petstore-accounts-"));
const db = `file:${join(dir, "accounts.db")}`;

const { cli, json } = cliOn(db);

describe("petstore accounts", () => {
  // biome-ignore lint/suspicious/noExplicitAny: the printed JSON
  let shop: any;
  beforeAll(async () => {
    shop = await json(["accounts", "create", "--name", "Shop", "--plan", "pro"]);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("creates an account with its plan's limits and prints it", () => {
    expect(shop).toEqual({
      id: expect.stringMatching(/^acct_[0-9A-Za-z]{16}$/),
      name: "Shop",
      plan: "pro",
      perMinute: 300,
      perDay: 10_000,
      createdAt: expect.any(String),
      allowFrom: null,
    });
  });

  it("puts a key into it with the account's plan, or a smaller cap of its own", async () => {
    const plain = await json(["keys", "create", "--account", shop.id]);
    const capped = await json(["keys", "create", "--account", shop.id, "--per-minute", "10"]);
    expect([plain.plan, plain.perMinute, capped.perMinute]).toEqual(["pro", 300, 10]);
    expect((await json(["accounts", "show", shop.id])).keys).toEqual([plain.id, capped.id]);
  });

  it("caps a key given --plan with that plan's limits, not its account's own", async () => {
    const big = await json([
      "accounts",
      "create",
      "--name",
      "Big",
      "--plan",
      "enterprise",
      "--per-minute",
      "5000",
      "--per-day",
      "250000",
    ]);
    const test = await json(["keys", "create", "--account", big.id, "--plan", "free"]);
    expect([test.plan, test.perMinute, test.perDay]).toEqual(["free", 60, 1_000]);
  });

  it("makes a key without --account an account of its own, and says so", async () => {
    const { out } = await cli(["keys", "create", "--plan", "free"]);
    expect(out.at(-1)).toMatch(/^In account acct_\w+, made for it with the key's plan and limits\.$/);
  });

  it("refuses an account that does not exist, exit 1", async () => {
    const { code, err } = await cli(["keys", "create", "--account", "acct_none"]);
    expect([code, err]).toEqual([1, [expect.stringContaining("no account has the id acct_none")]]);
  });

  it("updates an account: the keys that follow it take its limits, a capped key keeps its cap; audited", async () => {
    const other = await json(["accounts", "create", "--name", "Other", "--plan", "free"]);
    const plain = await json(["keys", "create", "--account", other.id]);
    const capped = await json(["keys", "create", "--account", other.id, "--per-minute", "5"]);
    const updated = await json(["accounts", "update", other.id, "--plan", "business", "--name", "Other Co"]);
    expect(updated).toMatchObject({ name: "Other Co", plan: "business", perMinute: 1_000 });
    expect((await json(["keys", "show", plain.id])).perMinute).toBe(1_000);
    expect((await json(["keys", "show", capped.id])).perMinute).toBe(5);
    const trail = (await json(["audit", "--key", other.id])) as { action: string }[];
    expect(trail.map((entry) => entry.action)).toEqual(["update", "create"]);
  });

  it("moves every key that follows a key's own account when that key's plan changes", async () => {
    const alone = await json(["keys", "create", "--plan", "free"]);
    const joined = await json(["keys", "create", "--account", ownAccountId(alone.id)]);
    await cli(["keys", "update", alone.id, "--plan", "pro"]);
    expect((await json(["keys", "show", joined.id])).plan).toBe("pro");
    expect((await json(["accounts", "show", ownAccountId(alone.id)])).plan).toBe("pro");
  });

  it("keeps a key made with one limit at the account's plan and other limit of then, through the account's change", async () => {
    const team = await json(["accounts", "create", "--name", "Team", "--plan", "pro"]);
    const capped = await json(["keys", "create", "--account", team.id, "--per-minute", "10"]);
    await cli(["accounts", "update", team.id, "--plan", "business"]);
    const shown = await json(["keys", "show", capped.id]);
    expect([shown.plan, shown.perMinute, shown.perDay]).toEqual(["pro", 10, 10_000]);
  });

  it("makes a capped key follow its account again with --follow-account", async () => {
    const team = await json(["accounts", "create", "--name", "Team", "--plan", "business"]);
    const capped = await json(["keys", "create", "--account", team.id, "--plan", "free"]);
    const followed = await json(["keys", "update", capped.id, "--follow-account"]);
    expect([followed.plan, followed.perMinute]).toEqual(["business", 1_000]);
    const { code, err } = await cli(["keys", "update", capped.id, "--follow-account", "--plan", "pro"]);
    expect([code, err[0]]).toEqual([2, expect.stringContaining("--follow-account takes the account's plan")]);
  });

  describe("--allow-from", () => {
    // biome-ignore lint/suspicious/noExplicitAny: the printed JSON
    let limited: any;
    beforeAll(async () => {
      limited = await json(["accounts", "create", "--name", "Office", "--plan", "free", "--allow-from", "10.0.0.0/8"]);
    });

    it("makes an account with ranges, shown by accounts show and list", async () => {
      expect(limited.allowFrom).toEqual(["10.0.0.0/8"]);
      expect((await json(["accounts", "show", limited.id])).allowFrom).toEqual(["10.0.0.0/8"]);
      expect((await cli(["accounts", "show", limited.id])).out[0]).toMatch(/; allow from 10\.0\.0\.0\/8$/);
      expect((await cli(["accounts", "list"])).out).toContainEqual(
        expect.stringMatching(/"Shop" .*; allow from any address$/),
      );
    });

    it("changes an account's ranges, and clears them with any", async () => {
      const changed = await json(["accounts", "update", limited.id, "--allow-from", "10.0.0.0/8, 2001:db8::/32"]);
      expect(changed.allowFrom).toEqual(["10.0.0.0/8", "2001:db8::/32"]);
      expect((await cli(["accounts", "show", limited.id])).out[0]).toMatch(
        /; allow from 10\.0\.0\.0\/8, 2001:db8::\/32$/,
      );
      expect((await json(["accounts", "update", limited.id, "--allow-from", "any"])).allowFrom).toBeNull();
    });

    it("refuses a malformed range or a prefix past /32 or /128, exit 2 naming the flag", async () => {
      for (const [argv, problem] of [
        [
          ["accounts", "create", "--name", "X", "--plan", "free", "--allow-from", "10.0.0/8"],
          "'10.0.0/8' is not an IP address",
        ],
        [["accounts", "update", limited.id, "--allow-from", "10.0.0.0/33"], "'10.0.0.0/33' has a prefix past /32"],
        [["accounts", "update", limited.id, "--allow-from", "::/129"], "'::/129' has a prefix past /128"],
      ] as const) {
        const { code, err } = await cli([...argv]);
        expect([code, err[0]], argv.join(" ")).toEqual([
          2,
          expect.stringContaining(`--allow-from must be CIDR ranges: ${problem}`),
        ]);
      }
    });
  });

  it("lists accounts in the order they were made", async () => {
    const listed = (await json(["accounts", "list"])) as { id: string }[];
    expect(listed[0]!.id).toBe(shop.id);
  });

  it("refuses an enterprise account without its limits as a usage error naming the flag", async () => {
    const { code, err } = await cli(["accounts", "create", "--name", "Big", "--plan", "enterprise"]);
    expect(code).toBe(2);
    expect(err[0]).toContain("--per-minute is required for an enterprise key");
  });
});
