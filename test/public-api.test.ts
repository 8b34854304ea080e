import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { entries, renderReport, runtimeNames } from "../scripts/api-report.js";

const ROOT = resolve(import.meta.dirname, "..");

/**
 * The public surface of each package, names and types, is the API report checked in beside
 * it (`packages/<package>/api/*.api.md`): a change to it shows as a diff there, reviewed on
 * purpose. `npm run api-report` writes the reports again.
 */
describe("public API", () => {
  it("has a report for every entry point a package exports", () => {
    expect(entries().map((entry) => [entry.specifier, entry.report])).toEqual([
      ["@petstore/adapters/memory", "packages/adapters/api/memory.api.md"],
      ["@petstore/adapters/libsql", "packages/adapters/api/libsql.api.md"],
      ["@petstore/adapters/libsql/connect", "packages/adapters/api/libsql-connect.api.md"],
      ["@petstore/adapters/postgres", "packages/adapters/api/postgres.api.md"],
      ["@petstore/adapters/redis", "packages/adapters/api/redis.api.md"],
      ["@petstore/adapters/d1", "packages/adapters/api/d1.api.md"],
      ["@petstore/adapters/durable-objects", "packages/adapters/api/durable-objects.api.md"],
      ["@petstore/core", "packages/core/api/index.api.md"],
      ["@petstore/core/testing", "packages/core/api/testing.api.md"],
    ]);
  });

  it.each(entries())(
    "$specifier exports exactly what $report shows, names and types",
    async (entry) => {
      const checkedIn = readFileSync(join(ROOT, entry.report), "utf8");
      expect(
        renderReport(entry, await runtimeNames(entry)),
        `${entry.report} is out of date: run npm run api-report and review the diff`,
      ).toBe(checkedIn);
    },
    120_000,
  );
});
