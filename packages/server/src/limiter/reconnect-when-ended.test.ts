import { EventEmitter } from "node:events";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { reconnectWhenEnded } from "./reconnect-when-ended.js";

/** A stand-in for an ioredis client: its status, announced as ioredis announces it, and its connects. */
class Client extends EventEmitter {
  status = "ready";
  connects = 0;
  step(status: string): void {
    this.status = status;
    this.emit(status);
  }
  connect(): Promise<void> {
    this.connects++;
    this.step("connecting");
    return Promise.resolve();
  }
}

describe("reconnectWhenEnded", () => {
  let client: Client;
  let closed: boolean;
  let restarts: number;
  beforeEach(() => {
    vi.useFakeTimers();
    client = new Client();
    closed = false;
    restarts = 0;
    reconnectWhenEnded(
      client,
      () => closed,
      () => restarts++,
    );
  });
  afterEach(() => vi.useRealTimers());

  it("connects a client that ended by itself again, a second later, and says so", () => {
    client.step("close");
    client.step("end");
    vi.advanceTimersByTime(999);
    expect(client.connects).toBe(0);
    vi.advanceTimersByTime(1);
    expect([client.connects, restarts, client.status]).toEqual([1, 1, "connecting"]);
  });

  it("does so each time it ends", () => {
    for (let time = 0; time < 3; time++) {
      client.step("end");
      vi.advanceTimersByTime(1_000);
    }
    expect(client.connects).toBe(3);
  });

  it("leaves a closed client closed", () => {
    closed = true;
    client.step("end");
    vi.advanceTimersByTime(60_000);
    expect(client.connects).toBe(0);
  });

  it("leaves alone a client that reconnected meanwhile", () => {
    client.step("end");
    client.step("connecting");
    vi.advanceTimersByTime(60_000);
    expect(client.connects).toBe(0);
  });
});
