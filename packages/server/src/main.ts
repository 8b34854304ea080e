#!/usr/bin/env bun
/**
 * The `petstore` executable: runs the command line on this process's argv and environment
 * and exits with its code. Compiled into dist/petstore by build.ts; also runs as a script
 * under Bun or Deno.
 */
import process from "node:process";
import { runCli } from "./cli.js";

const code = await runCli(process.argv.slice(2), process.env, {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
});
// Exit only once the last lines have reached stdout (a pipe may still be draining).
process.stdout.write("", () => process.exit(code));
