/**
 * "Node 20+" kept honest: every package the repository installs either accepts
 * the Node the repository documents (its own `engines`), or the README's "Node versions"
 * section names it, since `npm install` warns EBADENGINE for it there. And the worker example
 * names the wrangler this repository pins, the one it was tested with.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

type Version = [number, number, number];
const parse = (text: string): Version => {
  const [major = 0, minor = 0, patch = 0] = text.split(".").map(Number);
  return [major, minor, patch];
};
const compare = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/**
 * Whether `version` satisfies an npm range of the forms engines use: alternatives joined by
 * `||`, each comparators `>=`, `>`, `<`, `<=`, `^`, `~` or a bare version; anything else throws.
 */
function satisfies(version: string, range: string): boolean {
  const v = parse(version);
  // An operator may stand apart from its version (">= 20.0.0"); "*" accepts any.
  return range.split("||").some((alternative) =>
    alternative
      .replace(/(>=|<=|>|<|\^|~|=)\s+/g, "$1")
      .trim()
      .split(/\s+/)
      .every((comparator) => {
        if (comparator === "*" || comparator === "") return true;
        const match = /^(>=|<=|>|<|\^|~|=)?v?(\d+(?:\.\d+){0,2})(?:\.[x*])?$/.exec(comparator);
        if (!match) throw new Error(`cannot read the range '${range}'`);
        const [, operator = "=", text] = match;
        const bound = parse(text!);
        const parts = text!.split(".").length;
        const upper: Version = operator === "~" && parts > 1 ? [bound[0], bound[1] + 1, 0] : [bound[0] + 1, 0, 0];
        switch (operator) {
          case ">=":
            return compare(v, bound) >= 0;
          case ">":
            return compare(v, bound) > 0;
          case "<":
            return compare(v, bound) < 0;
          case "<=":
            return compare(v, bound) <= 0;
          case "^":
          case "~":
            return compare(v, bound) >= 0 && compare(v, upper) < 0;
          default:
            return parts === 3 ? compare(v, bound) === 0 : compare(v, bound) >= 0 && compare(v, upper) < 0;
        }
      }),
  );
}

describe("the Node versions the README documents", () => {
  const documented = (JSON.parse(read("package.json")) as { engines: { node: string } }).engines.node;
  const lowest = /^>=(\d+(?:\.\d+)*)$/.exec(documented)![1]!;
  const section = /## Node versions\n([\s\S]*?)\n## /.exec(read("README.md"))?.[1] ?? "";

  it("reads ranges as npm does", () => {
    expect([
      satisfies("20.19.0", ">=20.19"),
      satisfies("20.18.1", "^20.19.0 || >=22.12.0"),
      satisfies("22.12.0", "^20.19.0 || >=22.12.0"),
    ]).toEqual([true, false, true]);
    expect([
      satisfies("20.19.0", ">=22.0.0"),
      satisfies("24.1.0", "^20.0.0 || ^22.0.0 || >=24.0.0"),
      satisfies("23.1.0", "^20.0.0 || ^22.0.0 || >=24.0.0"),
    ]).toEqual([false, true, false]);
  });

  it(`are the repository's own engines (${documented}), named in the README's Node versions section`, () => {
    expect(section).toContain(`Node ${lowest} or later`);
  });

  it("name every installed package that wants a newer Node, and why", () => {
    const lock = JSON.parse(read("package-lock.json")) as {
      packages: Record<string, { engines?: { node?: string }; optional?: boolean }>;
    };
    // Optional packages that do not fit are skipped by npm without a warning.
    const newer = Object.entries(lock.packages)
      .filter(
        ([path, entry]) =>
          path.startsWith("node_modules/") &&
          !entry.optional &&
          entry.engines?.node !== undefined &&
          !satisfies(lowest, entry.engines.node),
      )
      .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
    expect(newer.sort()).toEqual(["@cloudflare/kv-asset-handler", "miniflare", "wrangler"]);
    for (const name of newer) expect(section).toContain(`\`${name}\``);
    expect(section).toContain("EBADENGINE");
  });

  it("include the wrangler the worker example was tested with, the one package.json pins", () => {
    const wrangler = (JSON.parse(read("package.json")) as { devDependencies: Record<string, string> }).devDependencies
      .wrangler!;
    expect(wrangler).toMatch(/^\d+\.\d+\.\d+$/);
    const readme = read("examples/worker-module/README.md");
    expect(readme).toContain(`Tested with wrangler ${wrangler}`);
    expect(readme).toContain(`wrangler@${wrangler}`);
  });
});
