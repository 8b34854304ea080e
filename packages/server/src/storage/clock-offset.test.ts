import { describe, expect, it } from "vitest";
import { clockOffsets } from "./clock-offset.js";

/** A server clock and a store's, the test moving both; a store reading takes `roundTrip` ms. */
function setUp(roundTrip = 10) {
  const time = { server: 1_000_000, store: 1_000_000, monotonic: 0 };
  const lines: { level: string; event: string; fields: Record<string, unknown> }[] = [];
  const offsets: [string, number][] = [];
  const clocks = clockOffsets(
    [
      {
        store: "database",
        shown: "postgres://db.internal/petstore",
        now: async () => {
          time.monotonic += roundTrip;
          return time.store + roundTrip / 2;
        },
      },
    ],
    {
      log: (level, event, fields) => lines.push({ level, event, fields }),
      clock: () => time.server,
      monotonic: () => time.monotonic,
      onOffset: (store, seconds) => offsets.push([store, seconds]),
    },
  );
  return { time, lines, offsets, clocks };
}

describe("clockOffsets", () => {
  it("measures this server's clock against the store's, from the middle of the round trip", async () => {
    const { time, offsets, clocks, lines } = setUp(40);
    time.server += 250;
    await clocks.measure();
    expect(offsets).toEqual([["database", 0.25]]);
    expect(clocks.offsets().get("database")).toBe(0.25);
    expect(lines).toEqual([]);
    expect(clocks.notice()).toBeUndefined();
  });

  it("logs one line when the offset passes 1 s, none while it stays, and one when it is back", async () => {
    const { time, clocks, lines } = setUp();
    time.server += 65_000;
    await clocks.measure();
    await clocks.measure();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: "warn",
      event: "clock offset",
      fields: { store: "database", at: "postgres://db.internal/petstore", offsetSeconds: 65 },
    });
    expect(clocks.notice()).toBe(
      "this server's clock is 65 s ahead of the database's (which decides limits, bans and expiries)",
    );
    time.server -= 64_500;
    await clocks.measure();
    expect(lines.map((line) => [line.level, line.event])).toEqual([
      ["warn", "clock offset"],
      ["info", "clock offset back within 1 s"],
    ]);
    expect(clocks.notice()).toBeUndefined();
  });

  it("says a clock behind as behind", async () => {
    const { time, clocks, lines } = setUp();
    time.server -= 3_000;
    await clocks.measure();
    expect(lines[0]!.fields.offsetSeconds).toBe(-3);
    expect(clocks.notice()).toMatch(/3 s behind the database's/);
  });

  it("skips a reading whose round trip took over a second, and a store that fails", async () => {
    const { time, clocks, offsets } = setUp(1_500);
    time.server += 65_000;
    await clocks.measure();
    expect(offsets).toEqual([]);
    const failing = clockOffsets(
      [{ store: "limiter", shown: "redis://cache", now: () => Promise.reject(new Error("down")) }],
      { log: () => {} },
    );
    await expect(failing.measure()).resolves.toBeUndefined();
    expect(failing.offsets().size).toBe(0);
  });
});
