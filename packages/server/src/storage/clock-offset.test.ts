import { describe, expect, it } from "vitest";
import { memoryLimiter } from "@petstore/adapters/memory";
import { clockOffsets, observedLimiter } from "./clock-offset.js";

/** A server clock and a store's, the test moving both; a store reading takes `roundTrip` ms. */
function setUp(roundTrip = 10, local = false) {
  const time = { server: 1_000_000, store: 1_000_000, monotonic: 0 };
  const lines: { level: string; event: string; fields: Record<string, unknown> }[] = [];
  const offsets: [string, number][] = [];
  const steps: [string, number][] = [];
  /** Time passing for every clock alike. */
  const pass = (ms: number) => {
    time.server += ms;
    time.store += ms;
    time.monotonic += ms;
  };
  const clocks = clockOffsets(
    [
      {
        store: "database",
        shown: "postgres://db.internal/petstore",
        // Every clock moves on during the round trip; the store reads its clock in the middle.
        now: async () => {
          const reading = time.store + roundTrip / 2;
          pass(roundTrip);
          return reading;
        },
        ...(local && { local }),
      },
    ],
    {
      log: (level, event, fields) => lines.push({ level, event, fields }),
      clock: () => time.server,
      monotonic: () => time.monotonic,
      onOffset: (store, seconds) => offsets.push([store, seconds]),
      onStep: (store, seconds) => steps.push([store, seconds]),
    },
  );
  return { time, lines, offsets, steps, clocks, pass };
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

  it("says once that the store's clock stepped back, by how much, and tells onStep", async () => {
    const { time, clocks, lines, steps, pass } = setUp();
    await clocks.measure();
    pass(5_000);
    time.store -= 3_600_000;
    await clocks.measure();
    pass(5_000);
    await clocks.measure();
    expect(steps).toEqual([["database", -3_600]]);
    expect(lines.filter((line) => line.event === "clock step")).toEqual([
      {
        level: "warn",
        event: "clock step",
        fields: expect.objectContaining({
          store: "database",
          stepSeconds: -3_600,
          note: expect.stringMatching(/stepped back 3600 s/),
        }),
      },
    ]);
  });

  it("says a step forward as forward", async () => {
    const { time, clocks, steps, pass } = setUp();
    await clocks.measure();
    pass(5_000);
    time.store += 90_000;
    await clocks.measure();
    expect(steps).toEqual([["database", 90]]);
  });

  it("takes no drift within 1 s and what the round trips leave unknown for a step", async () => {
    const { time, clocks, steps, pass } = setUp(400);
    await clocks.measure();
    pass(5_000);
    time.store -= 1_300;
    await clocks.measure();
    expect(steps).toEqual([]);
  });

  it("watches a local store's clock for steps only: it has no offset from this machine's", async () => {
    const { time, clocks, steps, offsets, lines, pass } = setUp(10, true);
    time.server += 65_000;
    await clocks.measure();
    pass(5_000);
    time.store -= 300_000;
    await clocks.measure();
    expect(offsets).toEqual([]);
    expect(steps).toEqual([["database", -300]]);
    expect(lines.map((line) => line.event)).toEqual(["clock step"]);
  });

  it("sees a step at the next request that read the store's clock, not at the next check", async () => {
    const { time, clocks, steps, pass } = setUp();
    await clocks.measure();
    pass(1_000);
    time.store -= 300_000;
    clocks.observe("database", time.store, time.monotonic, time.monotonic);
    expect(steps).toEqual([["database", -300]]);
  });

  it("takes a slow request's reading for no step: what its round trip leaves unknown is as wide", async () => {
    const { time, clocks, steps, pass } = setUp();
    await clocks.measure();
    pass(1_000);
    // Answered 3 s after it was sent, its reading of the store's clock is anywhere in those 3 s.
    clocks.observe("database", time.store, time.monotonic - 3_000, time.monotonic);
    clocks.observe("database", time.store - 1_400, time.monotonic - 3_000, time.monotonic);
    expect(steps).toEqual([]);
  });

  it("reads the store's clock in every decision of an observed limiter, which decides as before", async () => {
    const readings: [string, number, number, number][] = [];
    let monotonic = 10;
    const limiter = observedLimiter(
      memoryLimiter({ clock: () => 1_000_000 }),
      "database",
      { observe: (...reading) => readings.push(reading) },
      () => (monotonic += 2),
    );
    const windows = [
      { name: "minute", limit: 1, seconds: 60 },
      { name: "day", limit: 10, seconds: 86_400 },
    ] as const;
    const decision = await limiter.hit({ bucket: "key:a", windows, ban: { threshold: 30, seconds: 600 } });
    expect(decision).toMatchObject({ allowed: true, now: 1_000_000 });
    expect(readings).toEqual([["database", 1_000_000, 12, 14]]);
    expect(await limiter.unban("key:a")).toBe(false);
  });
});
