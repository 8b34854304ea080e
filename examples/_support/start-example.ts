import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { freePort } from "../../test/_support/free-port.js";
import { waitFor } from "../../test/_support/wait-for.js";

export { freePort };

/** The repository root, for locating the installed bun/deno binaries. */
export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const BIN = `${ROOT}node_modules/.bin`;

export interface RunningExample {
  child: ChildProcess;
  /** Everything printed on stdout so far. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts an example program and waits (at most `timeoutMs`) until its stdout matches
 * `ready`; the caller must `stop()` it, which kills it by PID.
 */
export async function startExample(
  command: string,
  args: string[],
  options: { ready: RegExp; env?: Record<string, string>; cwd?: string; timeoutMs?: number },
): Promise<RunningExample> {
  const child = spawn(command, args, {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk) => (stdout += chunk));
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  };
  const ready = () => {
    if (child.exitCode !== null) throw new Error(`example exited with ${child.exitCode}:\n${stdout}\n${stderr}`);
    return options.ready.test(stdout);
  };
  try {
    await waitFor(ready, options.timeoutMs ?? 15_000, {
      every: 25,
      what: () => `the example to print ${options.ready}:\n${stdout}\n${stderr}`,
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { child, output: () => stdout, stop };
}

/** The API key an example printed in its `curl` line. */
export function printedKey(example: RunningExample): string {
  const key = /Bearer (psk_\w+)/.exec(example.output())?.[1];
  if (key === undefined) throw new Error(`the example printed no key:\n${example.output()}`);
  return key;
}

export interface ServedExample extends RunningExample {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  base: string;
  /** The key it printed, and the header that sends it. */
  key: string;
  auth: { Authorization: string };
}

/**
 * A server program of `examples/` (run from its TypeScript sources by Bun, or by Node through
 * tsx) on a free loopback port, once it printed its `curl` line with a key.
 */
export async function startServerExample(
  program: string,
  options: { runtime?: "bun" | "node"; env?: Record<string, string> } = {},
): Promise<ServedExample> {
  const port = await freePort();
  // Node itself (not npx), so that stop() kills the server's own PID.
  const [command, args] =
    options.runtime === "node"
      ? [process.execPath, ["--conditions=@petstore/source", "--import", "tsx", program]]
      : [`${BIN}/bun`, ["--conditions=@petstore/source", program]];
  const example = await startExample(command, args, {
    ready: /curl .*\n/,
    env: { PORT: String(port), ...options.env },
  });
  const key = printedKey(example);
  return { ...example, base: `http://127.0.0.1:${port}`, key, auth: { Authorization: `Bearer ${key}` } };
}
