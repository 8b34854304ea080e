#!/usr/bin/env bun
/**
 * The `petstore` executable: runs the command line on this process's argv and environment
 * and exits with its code. Compiled into dist/petstore by build.ts; also runs as a script
 * under Bun or Deno.
 */
import process from "node:process";
import { firstLine } from "./messages/first-line.js";

/**
 * The command line, loaded here rather than imported: loading it loads SQLite's native driver,
 * which the compiled binary unpacks into TMPDIR first, and a failure there is then one line
 * instead of the runtime's dump of the bundle's source.
 */
async function loadCli(): Promise<typeof import("./cli.js")> {
  try {
    return await import("./cli.js");
  } catch (error) {
    const message = firstLine(error);
    // node:os only here: loading it cost every start.
    const { tmpdir } = await import("node:os");
    process.stderr.write(
      `petstore: cannot load SQLite's driver (${message}); the binary unpacks it into TMPDIR (${tmpdir()}), which must exist, be writable and allow executing files\n`,
    );
    process.exit(1);
  }
}

const { runCli } = await loadCli();

/** Where a standard stream's text goes, and how to wait until all of it is out. */
interface Output {
  write(text: string): void;
  /** Calls `done` once everything written has reached the stream (a pipe may still be draining). */
  drained(done: () => void): void;
}

/**
 * Stdout or stderr: under Bun (the binary) its file sink, because `process.stdout` and
 * `process.stderr`, Node streams, load Bun's stream modules when first touched, which cost a
 * start about 7 ms before it could answer (stderr too: a start on a database without an
 * active key writes its warning there); under Deno, the Node stream.
 */
function output(name: "stdout" | "stderr"): Output {
  const sink = (globalThis as { Bun?: typeof Bun }).Bun?.[name].writer();
  if (sink) {
    return {
      write: (text) => {
        sink.write(text);
        void sink.flush();
      },
      drained: (done) => void Promise.resolve(sink.flush()).then(done, done),
    };
  }
  const stream = process[name];
  return { write: (text) => void stream.write(text), drained: (done) => void stream.write("", done) };
}

/**
 * Lines for stdout, written once per turn of the event loop rather than one write each: the
 * access log writes a line per request, and a write per line cost about 4% of a busy server.
 */
function bufferedLines(output: Output) {
  let pending = "";
  const flush = () => {
    if (pending === "") return;
    output.write(pending);
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

const stdout = output("stdout");
const stderr = output("stderr");
const out = bufferedLines(stdout);
const code = await runCli(process.argv.slice(2), process.env, {
  out: out.write,
  err: (line) => stderr.write(`${line}\n`),
});
out.flush();
// Exit only once the last lines have reached stdout and stderr (a pipe may still be draining).
stdout.drained(() => stderr.drained(() => process.exit(code)));
