import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type OutageLog, outageLog, SETTLE_MS } from "./outage-log.js";

describe("outageLog", () => {
  let now: number;
  let lines: [string, Record<string, unknown>][];
  let log: OutageLog;
  /** Moves the monotonic clock and the timers together. */
  const pass = (ms: number) => {
    now += ms;
    vi.advanceTimersByTime(ms);
  };
  beforeEach(() => {
    vi.useFakeTimers();
    now = 1_000;
    lines = [];
    log = outageLog(
      {
        lost: "storage unavailable",
        back: "storage available again",
        lengthField: "unavailableMs",
        countField: "answered503",
      },
      (event, fields) => lines.push([event, fields]),
      () => now,
    );
  });
  afterEach(() => void vi.useRealTimers());

  it("says an outage at its first failure, with its reason, and nothing for the failures after it", () => {
    log.failed("the Postgres server is unreachable (ECONNREFUSED)");
    pass(200);
    log.failed("the Postgres server did not answer within 1000 ms");
    expect(lines).toEqual([["storage unavailable", { reason: "the Postgres server is unreachable (ECONNREFUSED)" }]]);
  });

  it("says it is over once the store answered for a second, with its length to that answer and what it caused", () => {
    log.failed("down");
    for (let i = 0; i < 3; i++) log.counted();
    pass(3_800);
    log.answered();
    pass(SETTLE_MS - 1);
    expect(lines).toHaveLength(1);
    pass(1);
    expect(lines[1]).toEqual(["storage available again", { unavailableMs: 3_800, answered503: 3 }]);
  });

  it("logs two outages 1.5 s apart as two pairs of lines, each counting its own", () => {
    log.failed("first");
    log.counted();
    pass(500);
    log.answered();
    pass(1_500);
    log.failed("second");
    log.counted();
    log.counted();
    pass(700);
    log.answered();
    pass(SETTLE_MS);
    expect(lines).toEqual([
      ["storage unavailable", { reason: "first" }],
      ["storage available again", { unavailableMs: 500, answered503: 1 }],
      ["storage unavailable", { reason: "second" }],
      ["storage available again", { unavailableMs: 700, answered503: 2 }],
    ]);
  });

  it("merges outages less than a second apart into one, and says how many it merged", () => {
    log.failed("flapping");
    pass(100);
    log.answered();
    pass(300);
    log.failed("flapping");
    pass(100);
    log.answered();
    pass(SETTLE_MS);
    expect(lines).toEqual([
      ["storage unavailable", { reason: "flapping" }],
      [
        "storage available again",
        { unavailableMs: 500, answered503: 0, outages: 2, note: "2 outages less than 1 s apart, logged as one" },
      ],
    ]);
  });

  it("counts nothing and says nothing while the store answers", () => {
    log.answered();
    log.counted();
    pass(5_000);
    expect(lines).toEqual([]);
  });
});
