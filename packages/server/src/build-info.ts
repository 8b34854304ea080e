import process from "node:process";
import { VERSION } from "./version.js";

/** Set by build.ts (`define`) in the compiled binary; absent when running from source. */
declare const PETSTORE_BUILD: { commit: string; target: string } | undefined;

/** What `petstore_build_info` reports: the version, the git commit built from, the compile target. */
export const BUILD_INFO: { version: string; commit: string; target: string } = {
  version: VERSION,
  ...(typeof PETSTORE_BUILD === "object"
    ? PETSTORE_BUILD
    : { commit: "unknown", target: `source-${"Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node"}-${process.platform}-${process.arch}` }),
};
