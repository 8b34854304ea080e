import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { deadlines, type Waiting } from "./_deadlines.js";

/** A wait that records when it expired, by the fake clock. */
const waitNamed = (name: string, expired: string[]): Waiting => ({
  at: 0,
  expire: () => void expired.push(`${name}@${Date.now()}`),
});

describe("deadlines", () => {
  beforeEach(() => void vi.useFakeTimers({ now: 0 }));
  afterEach(() => void vi.useRealTimers());

  it("expires a wait once its length has passed, not before, and not one that ended", () => {
    const watch = deadlines(1_000, Date.now);
    const expired: string[] = [];
    watch.start(waitNamed("a", expired));
    const ended = watch.start(waitNamed("b", expired));
    vi.advanceTimersByTime(999);
    watch.end(ended);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(["a@1000"]);
    vi.advanceTimersByTime(5_000);
    expect(expired).toEqual(["a@1000"]);
  });

  it("expires waits begun at different times each at its own deadline, in the order they began", () => {
    const watch = deadlines(1_000, Date.now);
    const expired: string[] = [];
    watch.start(waitNamed("a", expired));
    vi.advanceTimersByTime(300);
    const b = watch.start(waitNamed("b", expired));
    vi.advanceTimersByTime(200);
    watch.start(waitNamed("c", expired));
    watch.end(b);
    vi.advanceTimersByTime(2_000);
    expect(expired).toEqual(["a@1000", "c@1500"]);
    // And it starts again once the queue had emptied.
    watch.start(waitNamed("d", expired));
    vi.advanceTimersByTime(1_000);
    expect(expired).toEqual(["a@1000", "c@1500", "d@3500"]);
  });

  it("holds a bounded queue behind a wait that never ends, which still expires on time", () => {
    const watch = deadlines(30_000, Date.now);
    const expired: string[] = [];
    watch.start(waitNamed("stalled", expired));
    for (let i = 0; i < 100_000; i++) watch.end(watch.start(waitNamed(`quick${i}`, expired)));
    expect(watch.queued()).toBeLessThan(10_000);
    vi.advanceTimersByTime(30_000);
    expect(expired).toEqual(["stalled@30000"]);
    expect(watch.queued()).toBe(0);
  });
});
