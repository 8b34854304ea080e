import { defineConfig } from "vitest/config";

// Workspace packages resolve to their TypeScript sources, so tests need no build step.
const conditions = ["@petstore/source", "module", "node", "import", "default"];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ["packages/*/src/**/*.test.ts", "test/**/*.test.ts", "examples/**/*.test.ts"],
    testTimeout: 20_000,
  },
});
