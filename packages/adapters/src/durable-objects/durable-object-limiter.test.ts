import { type HitInput, StorageUnavailableError } from "@petstore/core";
import { describe, expect, it } from "vitest";
import { durableObjectLimiter } from "./index.js";

const input: HitInput = {
  bucket: "key:key_a",
  windows: [
    { name: "minute", limit: 60, seconds: 60 },
    { name: "day", limit: 1000, seconds: 86_400 },
  ],
  ban: { threshold: 30, seconds: 600 },
};

describe("durableObjectLimiter", () => {
  it("asks the object named after the bucket, with the hit as JSON", async () => {
    const asked: { name: unknown; body: unknown }[] = [];
    const limiter = durableObjectLimiter({
      idFromName: (name) => ({ name }),
      get: (id) => ({
        fetch: async (request) => {
          asked.push({ name: (id as { name: string }).name, body: await request.json() });
          return Response.json({ allowed: true, windows: [] });
        },
      }),
    });
    expect(await limiter.hit(input)).toEqual({ allowed: true, windows: [] });
    expect(asked).toEqual([{ name: "key:key_a", body: input }]);
  });

  it("answers 503 (StorageUnavailableError) when the object cannot be reached or fails", async () => {
    const unreachable = durableObjectLimiter({
      idFromName: () => "id",
      get: () => ({ fetch: () => Promise.reject(new Error("Durable Object is overloaded")) }),
    });
    await expect(unreachable.hit(input)).rejects.toBeInstanceOf(StorageUnavailableError);
    const failing = durableObjectLimiter({
      idFromName: () => "id",
      get: () => ({ fetch: async () => new Response("internal error", { status: 500 }) }),
    });
    await expect(failing.hit(input)).rejects.toBeInstanceOf(StorageUnavailableError);
  });
});
