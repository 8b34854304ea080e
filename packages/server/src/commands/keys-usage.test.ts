import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { UsageTally } from "@petstore/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliOn } from "../../../../test/_support/cli-in-process.js";
import { openStorage } from "../storage/open-storage.js";

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), "petstore-keys-usage-"));
const db = `file:${join(dir, "usage.db")}`;
let id: string;

const { cli, json } = cliOn(db);

/** A key with usage as its servers would have written it: 5 minutes, 3 hours and 3 days ago. */
beforeAll(async () => {
  ({ id } = JSON.parse((await cli(["keys", "create", "--plan", "free", "--json"])).out.join("\n")) as { id: string });
  const storage = await openStorage({ url: db });
  const minute = (ago: number) => Date.now() - ago - ((Date.now() - ago) % MINUTE);
  const tally = (ago: number, admitted: number, rateLimited = 0, banned = 0, unauthorized = 0): UsageTally => ({
    keyId: id,
    minute: minute(ago),
    admitted,
    rateLimited,
    banned,
    unauthorized,
  });
  try {
    await storage.adapters.keys.addUsage([tally(5 * MINUTE, 4, 2, 1, 3), tally(3 * HOUR, 10), tally(3 * DAY, 100)]);
  } finally {
    storage.close();
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("petstore keys usage", () => {
  it("shows the last 24 hours by hour as a table, totals last", async () => {
    const { code, out } = await cli(["keys", "usage", id]);
    expect(code).toBe(0);
    expect(out[0]).toMatch(/^HOUR \(UTC\)\s+ADMITTED\s+RATE-LIMITED\s+BANNED\s+UNAUTHORIZED$/);
    expect(out).toHaveLength(1 + 25 + 1);
    expect(out[1]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:00:00Z\s+0\s+0\s+0\s+0$/);
    expect(out.at(-1)).toMatch(/^TOTAL\s+14\s+2\s+1\s+3$/);
  });

  it("prints the admin API's JSON with --json, and reads by minute or by day as asked", async () => {
    const recent = await json(["keys", "usage", id, "--since", "10m", "--step", "minute"]);
    expect(recent).toMatchObject({ keyId: id, step: "minute", totals: { admitted: 4, rateLimited: 2 } });
    expect(recent.buckets.length).toBeGreaterThanOrEqual(10);
    const week = await json(["keys", "usage", id, "--since", "7d"]);
    expect(week).toMatchObject({ step: "day", totals: { admitted: 114, rateLimited: 2, banned: 1, unauthorized: 3 } });
  });

  it("prints CSV with --csv, a header and a line per bucket", async () => {
    const { out } = await cli(["keys", "usage", id, "--since", "7d", "--csv"]);
    expect(out[0]).toBe("at,admitted,rate_limited,banned,unauthorized");
    expect(out.slice(1).every((line) => /^\d{4}-\d\d-\d\dT00:00:00\.000Z,\d+,\d+,\d+,\d+$/.test(line))).toBe(true);
    expect(out.slice(1).reduce((sum, line) => sum + Number(line.split(",")[1]), 0)).toBe(114);
  });

  it("refuses a span older than kept for its step, an unknown step, and both --json and --csv, exit 2", async () => {
    for (const [argv, message] of [
      [
        ["--since", "3d", "--step", "hour"],
        "petstore: --since 3d must be within the last 48 hours when the step is hour",
      ],
      [["--step", "week"], "petstore: --step must be one of minute, hour, day, not 'week'"],
      [["--since", "yesterday"], "petstore: --since must be a duration such as 90m, 24h or 30d, not 'yesterday'"],
      [["--json", "--csv"], "petstore: give --json or --csv, not both"],
    ] as const) {
      const { code, err } = await cli(["keys", "usage", id, ...argv]);
      expect(code).toBe(2);
      expect(err[0]).toContain(message);
    }
  });

  it("exits 1 for an id no key has", async () => {
    const { code, err } = await cli(["keys", "usage", "key_nobody"]);
    expect([code, err]).toEqual([1, ["petstore: no API key has the id 'key_nobody' (see 'petstore keys list')"]]);
  });
});
