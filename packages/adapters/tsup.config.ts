import { defineConfig } from "tsup";

export default defineConfig({
  // libsql/index, d1/index, durable-objects/index, postgres/index and redis/index load anywhere (no native code, no client: the
  // caller brings it); libsql/connect is for Node, Bun and Deno.
  entry: {
    "memory/index": "src/memory/index.ts",
    "libsql/index": "src/libsql/index.ts",
    "libsql/connect": "src/libsql/local/index.ts",
    "d1/index": "src/d1/index.ts",
    "durable-objects/index": "src/durable-objects/index.ts",
    "postgres/index": "src/postgres/index.ts",
    "redis/index": "src/redis/index.ts",
  },
  format: ["esm"],
  dts: true,
  clean: true,
  external: ["@petstore/core", "@libsql/client", "libsql"],
});
