#!/usr/bin/env bun
/**
 * The `petstore` executable: runs the command line on this process's argv and environment
 * and exits with its code. Compiled into dist/petstore by build.ts; also runs as a script
 * under Bun or Deno.
 */
import process from "node:process";
import { runCli } from "./cli.js";

/**
 * Lines for stdout, written once per turn of the event loop rather than one write each: the
 * access log writes a line per request, and a write per line cost about 4% of a busy server.
 */
function bufferedLines(stream: NodeJS.WriteStream) {
  let pending = "";
  const flush = () => {
    if (pending === "") return;
    stream.write(pending);
    pending = "";
  };
  return {
    write: (line: string) => {
      if (pending === "") setImmediate(flush);
      pending += `${line}\n`;
    },
    flush,
  };
}

const out = bufferedLines(process.stdout);
const code = await runCli(process.argv.slice(2), process.env, {
  out: out.write,
  err: (line) => process.stderr.write(`${line}\n`),
});
out.flush();
// Exit only once the last lines have reached stdout (a pipe may still be draining).
process.stdout.write("", () => process.exit(code));
