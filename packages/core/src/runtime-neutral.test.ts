import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import corePackage from "../package.json" with { type: "json" };

const SOURCE_DIR = import.meta.dirname;
/** Globals that exist only in some runtimes; core code must reach none of them. */
const RUNTIME_GLOBALS = new Set([
  "Bun",
  "Deno",
  "process",
  "require",
  "module",
  "Buffer",
  "__dirname",
  "__filename",
  "global",
  "setImmediate",
]);
/** The only bare modules core may import: its dependencies, and vitest for the contract suites. */
const ALLOWED_PACKAGES = new Set([
  ...Object.keys(corePackage.dependencies),
  ...Object.keys(corePackage.peerDependencies),
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

/** Every runtime-specific import or global reached in `code`, as `line: what`. Comments do not count. */
function runtimeSpecificUses(fileName: string, code: string): string[] {
  const source = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const report = (node: ts.Node, what: string) =>
    found.push(`${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${what}`);
  const checkSpecifier = (node: ts.Node, specifier: string) => {
    if (specifier.startsWith(".")) return;
    const packageName = specifier.startsWith("@")
      ? specifier.split("/").slice(0, 2).join("/")
      : specifier.split("/")[0]!;
    if (!ALLOWED_PACKAGES.has(packageName)) report(node, `import of '${specifier}'`);
  };
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      checkSpecifier(node, node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteral(argument)) checkSpecifier(node, argument.text);
      else report(node, "import() of a computed specifier");
    } else if (ts.isIdentifier(node) && RUNTIME_GLOBALS.has(node.text)) {
      // A property name (`x.process`, `{ process: 1 }`) is not the global.
      const parent = node.parent;
      const isPropertyName =
        (ts.isPropertyAccessExpression(parent) && parent.name === node) ||
        ((ts.isPropertyAssignment(parent) || ts.isPropertySignature(parent) || ts.isMethodDeclaration(parent)) &&
          parent.name === node);
      if (!isPropertyName) report(node, `global '${node.text}'`);
    } else if (ts.isPropertyAccessExpression(node) && node.expression.kind === ts.SyntaxKind.Identifier) {
      const owner = (node.expression as ts.Identifier).text;
      if (owner === "globalThis" && RUNTIME_GLOBALS.has(node.name.text)) report(node, `globalThis.${node.name.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("core is runtime-neutral", () => {
  const files = sourceFiles(SOURCE_DIR);

  it("finds the core sources to check", () => {
    expect(files.map((f) => relative(SOURCE_DIR, f))).toEqual(
      expect.arrayContaining(["app.ts", "index.ts", "testing/index.ts"]),
    );
  });

  it("imports no node: modules and no package outside its dependencies, and touches no Bun, Deno or process", () => {
    const offences = files.flatMap((file) =>
      runtimeSpecificUses(file, readFileSync(file, "utf8")).map((use) => `${relative(SOURCE_DIR, file)}:${use}`),
    );
    expect(offences).toEqual([]);
  });

  it("would catch each kind of runtime-specific code", () => {
    const sample = [
      'import { readFile } from "node:fs/promises";',
      'export { x } from "fs";',
      'const os = await import("node:os");',
      "const file = Bun.file('a');",
      "Deno.exit(1);",
      "const env = process.env.HOME;",
      "const b = globalThis.Buffer;",
      "// Bun.serve(...) in a comment is fine, as is a field named process:",
      "const ok = { process: 1 }.process;",
      'import * as v from "valibot";',
    ].join("\n");
    expect(runtimeSpecificUses("sample.ts", sample)).toEqual([
      "1: import of 'node:fs/promises'",
      "2: import of 'fs'",
      "3: import of 'node:os'",
      "4: global 'Bun'",
      "5: global 'Deno'",
      "6: global 'process'",
      "7: globalThis.Buffer",
    ]);
  });
});
