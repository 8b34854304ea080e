import { describe, expect, it } from "vitest";
import { pathnameOf } from "./pathname.js";

describe("pathnameOf", () => {
  it("is what URL parsing finds as the pathname, without query or fragment", () => {
    for (const url of [
      "http://localhost/v1/pets",
      "http://localhost/v1/pets?limit=5&status=sold",
      "http://localhost/v1/pets#top",
      "http://localhost/v1/pets?x=1#top",
      "http://localhost/v1/pets#a?b",
      "http://127.0.0.1:8080/v1/pets/42/",
      "https://user:pw@example.test/docs/index.css",
      "http://localhost/",
      "http://localhost/v1/pets/%31",
    ]) {
      expect(pathnameOf(url), url).toBe(new URL(url).pathname);
    }
  });

  it("is / for a URL with no path at all", () => {
    expect(pathnameOf("http://localhost")).toBe("/");
    expect(pathnameOf("http://localhost?x=1")).toBe("/");
  });
});
