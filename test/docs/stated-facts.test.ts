/**
 * What the documentation states as fact, checked against the thing: the path
 * the OpenAPI document is served at, and what the testing-with-memory example shows. (The
 * binary's size is checked in test/e2e/binary.test.ts, where the binary is built.)
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { memoryAdapters } from "@petstore/adapters/memory";
import { createPetstore } from "@petstore/core";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const pages = ["README.md", "docs/decisions.md", "docs/http-contract.md", "docs/binary.md", "docs/vm.md"];

describe("the documentation's facts", () => {
  it("names the OpenAPI document by the path it is served at, /v1/openapi.json", async () => {
    const petstore = createPetstore(memoryAdapters());
    const info = { clientAddress: "192.0.2.1" };
    expect((await petstore.fetch(new Request("http://petstore.test/v1/openapi.json"), info)).status).toBe(200);
    expect((await petstore.fetch(new Request("http://petstore.test/openapi.json"), info)).status).not.toBe(200);
    // A path that starts at /openapi.json (not <base>/openapi.json, not /v1/openapi.json).
    const bare = pages.flatMap((page) =>
      [...read(page).matchAll(/(?<![\w>/.-])\/openapi\.json/g)].map(
        (match) => `${page}: ...${read(page).slice(Math.max(0, match.index - 40), match.index + 13)}`,
      ),
    );
    expect(bare).toEqual([]);
  });

  it("says of testing-with-memory only what it shows: seeded pets, the clock, revocation with keyCacheMs: 0", () => {
    const claim = /\[examples\/testing-with-memory\]\(\.\.\/examples\/testing-with-memory\) does all of it/;
    expect(read("docs/library.md")).toMatch(claim);
    const example = read("examples/testing-with-memory/restock.test.ts");
    for (const shown of ["seed: {", "clock: () => now", "keyCacheMs: 0", "keys.revoke(", "status: 401", "status: 429"])
      expect(example).toContain(shown);
  });
});
