import { describe, expect, it } from "vitest";
import { shownUrl } from "./shown-url.js";

describe("shownUrl", () => {
  it.each([
    ["postgres://app:s3cret@db.internal:5432/petstore?sslmode=verify-full", "postgres://db.internal:5432/petstore"],
    ["postgres://app:p@ss@h1:5432,h2:5432/petstore", "postgres://h1:5432,h2:5432/petstore"],
    ["postgres://app:pa?ss@db.internal/petstore", "postgres://(not shown: it may hold a password)/petstore"],
    ["postgres://db.internal?user=me@corp&password=s3cret", "postgres://(not shown: it may hold a password)"],
    ["postgres://app:s3cret@db.internal?sslrootcert=/etc/ca.pem", "postgres://db.internal"],
    ["postgres://db.internal?host=/var/run/postgresql", "postgres://db.internal"],
    ["postgres://db.internal/petstore?password=s3cret", "postgres://db.internal/petstore"],
    ["libsql://db.example.turso.io?authToken=eyJ", "libsql://db.example.turso.io"],
    [
      "redis+sentinel://:s3cret@127.0.0.1:26379,127.0.0.1:26380/main",
      "redis+sentinel://127.0.0.1:26379,127.0.0.1:26380/main",
    ],
    ["rediss://default:s3cret@cache:6380/2", "rediss://cache:6380/2"],
    ["file:/var/lib/petstore/petstore.db", "file:/var/lib/petstore/petstore.db"],
    ["file:petstore.db?mode=ro", "file:petstore.db"],
    [":memory:", ":memory:"],
  ])("shows %s as %s", (url, shown) => {
    expect(shownUrl(url)).toBe(shown);
  });
});
