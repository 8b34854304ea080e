import { describe, expect, it } from "vitest";
import { waitFor } from "./wait-for.js";

// The one polling helper of the suites: its bound and its message are what the suites rely on.
describe("waitFor", () => {
  it("resolves once the condition holds, with how long that took", async () => {
    let checks = 0;
    const took = await waitFor(() => ++checks === 3, 2_000, { every: 10 });
    expect(checks).toBe(3);
    expect(took).toBeGreaterThanOrEqual(20);
    expect(took).toBeLessThan(2_000);
  });

  it("waits for an async condition", async () => {
    let checks = 0;
    await waitFor(async () => ++checks === 2, 2_000, { every: 1 });
    expect(checks).toBe(2);
  });

  it("fails after its bound, naming the condition in its own words", async () => {
    const acknowledged: number[] = [];
    await expect(waitFor(() => acknowledged.length >= 200, 50)).rejects.toThrow(
      "not within 50 ms: acknowledged.length >= 200",
    );
  });

  it("fails with what it was told it waited for, read when it fails", async () => {
    let output = "starting";
    setTimeout(() => (output = "port in use"), 10);
    await expect(waitFor(() => false, 100, { what: () => `the server to listen:\n${output}` })).rejects.toThrow(
      "not within 100 ms: the server to listen:\nport in use",
    );
  });

  it("is bounded when an async check never settles", async () => {
    const started = performance.now();
    await expect(waitFor(() => new Promise<boolean>(() => {}), 100, { what: "a hung server" })).rejects.toThrow(
      "not within 100 ms: a hung server",
    );
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("ends the wait with the error of a check that throws", async () => {
    await expect(
      waitFor(() => {
        throw new Error("the process exited (1)");
      }, 5_000),
    ).rejects.toThrow("the process exited (1)");
  });
});
