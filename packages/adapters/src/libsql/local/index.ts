// Node, Bun and Deno only: the native `libsql` addon and `node:fs`. The adapters themselves,
// which load anywhere, are in `@petstore/adapters/libsql`.
export { type ConnectLibsqlOptions, connectLibsql, type DatabaseLocation, databaseLocation } from "./connect-libsql.js";
export type { StorageObserver } from "./local-engine.js";
