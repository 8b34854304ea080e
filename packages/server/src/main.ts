#!/usr/bin/env bun
/**
 * The `petstore` executable: runs the command line on this process's argv and environment
 * and exits with its code. Compiled into dist/petstore by build.ts; also runs as a script
 * under Bun or Deno.
 */
import process from "node:process";

/**
 * The command line, loaded here rather than imported: loading it loads SQLite's native driver,
 * which the compiled binary unpacks into TMPDIR first, and a failure there is then one line
 * instead of the runtime's dump of the bundle's source.
 */
async function loadCli(): Promise<typeof import("./cli.js")> {
  try {
    return await import("./cli.js");
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).split("\n")[0];
    // node:os only here: loading it cost every start (issue 23 §5).
    const { tmpdir } = await import("node:os");
    process.stderr.write(`petstore: cannot load SQLite's driver (${message}); the binary unpacks it into TMPDIR (${tmpdir()}), which must exist, be writable and allow executing files\n`);
    process.exit(1);
  }
}

const { runCli } = await loadCli();

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
