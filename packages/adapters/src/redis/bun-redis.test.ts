import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisServer, startRedis } from "../../../../test/_support/redis-server.js";

const ROOT = join(import.meta.dirname, "../../../..");
let server: RedisServer;

beforeAll(async () => {
  server = await startRedis();
}, 30_000);
afterAll(() => server?.stop());

describe("redisLimiter on Bun's built-in RedisClient", () => {
  it("decides through the README's one-liner, concurrent hits and the NOSCRIPT path included", async () => {
    const { stdout } = await promisify(execFile)(
      join(ROOT, "node_modules/.bin/bun"),
      ["--conditions=@petstore/source", join(ROOT, "test/_support/redis-bun-client.ts"), server.url],
      { cwd: ROOT, timeout: 60_000 },
    );
    const outcome = JSON.parse(stdout.trim().split("\n").at(-1)!);
    const T0 = Date.UTC(2030, 0, 15, 12, 0, 10);
    // 5 admitted, 2 refusals (the threshold), the third refusal bans.
    expect(outcome.allowed).toEqual([true, true, true, true, true, false, false, false]);
    expect(outcome.remaining).toEqual([4, 3, 2, 1, 0, 0, 0, 0]);
    expect(outcome.bannedUntil).toEqual([null, null, null, null, null, null, null, T0 + 600_000]);
    expect(outcome.afterFlush).toEqual({ allowed: false, bannedUntil: T0 + 600_000 });
  }, 60_000);
});
