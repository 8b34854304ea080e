import { defineConfig } from "tsup";

export default defineConfig({
  entry: { "memory/index": "src/memory/index.ts", "libsql/index": "src/libsql/index.ts" },
  format: ["esm"],
  dts: true,
  clean: true,
  external: ["@petstore/core", "@libsql/client"],
});
