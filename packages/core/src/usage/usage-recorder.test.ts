import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { UsageTally } from "../ports.js";
import { USAGE_FLUSH_MS, type UsageRecorder, usageRecorder } from "./usage-recorder.js";

const T0 = Date.UTC(2030, 0, 15, 12);
const MINUTE = 60_000;
const none = { admitted: 0, rateLimited: 0, banned: 0, unauthorized: 0 };

describe("usageRecorder", () => {
  let batches: UsageTally[][];
  let failing: Error | undefined;
  let recorder: UsageRecorder;
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
    [batches, failing] = [[], undefined];
    recorder = usageRecorder({
      addUsage: async (tallies) => {
        if (failing) throw failing;
        batches.push([...tallies]);
      },
    });
  });
  afterEach(() => void vi.useRealTimers());

  it("writes nothing before the bound, then every count in one write the bound after the first", async () => {
    recorder.count("key_1", "admitted", T0, true, performance.now());
    await vi.advanceTimersByTimeAsync(USAGE_FLUSH_MS - 1);
    recorder.count("key_2", "admitted", T0, true, performance.now());
    expect(batches).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(batches).toHaveLength(1);
    expect(batches[0]!.map((tally) => tally.keyId)).toEqual(["key_1", "key_2"]);
  });

  it("counts each key's outcomes by minute of the limiter's instant, its last use from identified requests only", async () => {
    const at = performance.now();
    recorder.count("key_1", "admitted", T0 + 5, true, at);
    recorder.count("key_1", "rateLimited", T0 + 9, true, at);
    recorder.count("key_1", "unauthorized", T0 + 30, false, at);
    recorder.count("key_1", "banned", T0 + MINUTE, true, at);
    recorder.count("key_2", "unauthorized", T0 + 1, false, at);
    await recorder.flush();
    expect(batches).toEqual([
      [
        { keyId: "key_1", minute: T0, ...none, admitted: 1, rateLimited: 1, unauthorized: 1, lastUsedAt: T0 + 9 },
        { keyId: "key_1", minute: T0 + MINUTE, ...none, banned: 1, lastUsedAt: T0 + MINUTE },
        { keyId: "key_2", minute: T0, ...none, unauthorized: 1 },
      ],
    ]);
  });

  it("writes on the first count past the bound where no timer ran", async () => {
    const first = performance.now();
    recorder.count("key_1", "admitted", T0, true, first);
    recorder.count("key_1", "admitted", T0, true, first + USAGE_FLUSH_MS);
    // Only what is already due runs: the timer itself would fire at the bound, not now.
    await vi.advanceTimersByTimeAsync(0);
    expect(batches).toEqual([[{ keyId: "key_1", minute: T0, ...none, admitted: 2, lastUsedAt: T0 }]]);
  });

  it("keeps the counts of a write that failed for the next one, and rejects that flush", async () => {
    recorder.count("key_1", "admitted", T0, true, performance.now());
    failing = new Error("storage unavailable");
    await expect(recorder.flush()).rejects.toThrow("storage unavailable");
    failing = undefined;
    recorder.count("key_1", "admitted", T0, true, performance.now());
    await vi.advanceTimersByTimeAsync(USAGE_FLUSH_MS);
    const written = batches.flat();
    expect(written.reduce((sum, tally) => sum + tally.admitted, 0)).toBe(2);
  });

  it("writes nothing when nothing was counted", async () => {
    await recorder.flush();
    await vi.advanceTimersByTimeAsync(2 * USAGE_FLUSH_MS);
    expect(batches).toEqual([]);
  });
});
