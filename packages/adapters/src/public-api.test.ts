import { describe, expect, it } from "vitest";

/**
 * The runtime names each adapter entry point exports. A change to a package's surface must
 * show up here as a visible diff, reviewed on purpose.
 */
const exportedNames = async (specifier: string) => Object.keys(await import(specifier)).sort();

describe("public API", () => {
  it("@petstore/adapters/memory exports exactly these names", async () => {
    expect(await exportedNames("@petstore/adapters/memory")).toEqual([
      "memoryAdapters",
      "memoryIdempotency",
      "memoryKeys",
      "memoryLimiter",
      "memoryStore",
    ]);
  });

  it("@petstore/adapters/libsql exports exactly these names", async () => {
    expect(await exportedNames("@petstore/adapters/libsql")).toEqual([
      "checkLibsql",
      "libsqlAdapters",
      "libsqlIdempotency",
      "libsqlKeys",
      "libsqlLimiter",
      "libsqlStore",
      "migrate",
    ]);
  });

  it("@petstore/adapters/libsql/connect exports exactly these names", async () => {
    expect(await exportedNames("@petstore/adapters/libsql/connect")).toEqual(["connectLibsql"]);
  });
});
