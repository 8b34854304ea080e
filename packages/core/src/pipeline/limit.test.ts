import { memoryAdapters, memoryLimiter } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import { resolveOptions } from "../options.js";
import type { HitInput, RateLimiter } from "../ports.js";
import { limitStage } from "./limit.js";

const T0 = Date.UTC(2030, 0, 15, 12);

describe("limitStage", () => {
  it("hits the limiter once with the bucket, its windows and the ban policy, and hands on the limiter's decision and instant", async () => {
    const inner = memoryLimiter({ clock: () => T0 });
    const hits: HitInput[] = [];
    const limiter: RateLimiter = {
      hit: (input) => {
        hits.push(input);
        return inner.hit(input);
      },
    };
    const settings = resolveOptions({ ...memoryAdapters(), limiter });
    const limits = settings.limitsOf(undefined);
    const decision = await limitStage(settings)({ name: "ip:192.0.2.1", client: "192.0.2.1", limits });
    expect(decision).toMatchObject({
      allowed: true,
      now: T0,
      windows: [
        { name: "minute", remaining: 59 },
        { name: "day", remaining: 999 },
      ],
    });
    expect(hits).toEqual([{ bucket: "ip:192.0.2.1", windows: limits.windows, ban: { threshold: 30, seconds: 600 } }]);
  });
});
