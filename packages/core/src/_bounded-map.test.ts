import { describe, expect, it } from "vitest";
import { BoundedMap } from "./_bounded-map.js";

describe("BoundedMap", () => {
  it("holds at most its limit, forgetting the entry set longest ago", () => {
    const map = new BoundedMap<string, number>(2);
    map.set("a", 1).set("b", 2).set("c", 3);
    expect([map.size, map.has("a"), map.get("b"), map.get("c")]).toEqual([2, false, 2, 3]);
  });

  it("counts a key set again as the newest, without growing", () => {
    const map = new BoundedMap<string, number>(2);
    map.set("a", 1).set("b", 2).set("a", 10).set("c", 3);
    expect([map.size, map.get("a"), map.has("b"), map.get("c")]).toEqual([2, 10, false, 3]);
  });

  it("tells a key stored with undefined from a missing one", () => {
    const map = new BoundedMap<string, undefined>(1);
    map.set("nothing", undefined);
    expect([map.has("nothing"), map.has("else")]).toEqual([true, false]);
  });
});
