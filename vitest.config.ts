import { readFileSync } from "node:fs";
import { defineConfig, type Plugin } from "vitest/config";

// Workspace packages resolve to their TypeScript sources, so tests need no build step.
const conditions = ["@petstore/source", "module", "node", "import", "default"];

// Bun and Deno load `import x from "file" with { type: "text" }` as the file's text; Vite
// ignores the attribute (and vitest empties CSS), so this plugin inlines the text instead.
const textImports: Plugin = {
  name: "text-import-attributes",
  enforce: "pre",
  async transform(code, id) {
    if (id.includes("/node_modules/") || !code.includes("with {")) return undefined;
    const imports = /import\s+(\w+)\s+from\s*(["'])([^"']+)\2\s*with\s*\{\s*type:\s*["']text["']\s*\};?/g;
    for (const [statement, name, , path] of [...code.matchAll(imports)]) {
      const resolved = await this.resolve(path!, id);
      if (resolved === null) throw new Error(`${id}: cannot resolve ${path}`);
      const text = readFileSync(resolved.id, "utf8");
      code = code.replace(statement, () => `const ${name} = ${JSON.stringify(text)};`);
    }
    return code;
  },
};

export default defineConfig({
  plugins: [textImports],
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ["packages/*/src/**/*.test.ts", "test/**/*.test.ts", "examples/**/*.test.ts"],
    testTimeout: 20_000,
    // One PostgreSQL server for the run; suites make databases of their own on it.
    globalSetup: ["test/_support/postgres-global-setup.ts"],
  },
});
