import { describe, expect, it } from "vitest";
import { arrive } from "./arrival.js";

describe("arrive", () => {
  it("reads the request's id, its path and its time by each clock", () => {
    const request = new Request("http://petstore.test/v1/pets?limit=2", { headers: { "X-Request-Id": "abc-1" } });
    expect(arrive(request, 1_000, 12.5)).toEqual({
      requestId: "abc-1",
      pathname: "/v1/pets",
      now: 1_000,
      started: 12.5,
    });
  });
});
