import { expect, it } from "vitest";

it("exports exactly the libSQL adapter's public names", async () => {
  expect(Object.keys(await import("./index.js")).sort()).toEqual([
    "connectLibsql",
    "libsqlAdapters",
    "libsqlIdempotency",
    "libsqlKeys",
    "libsqlLimiter",
    "libsqlStore",
    "migrate",
  ]);
});
