/**
 * The processes a benchmark starts: pinned to a core when `taskset` exists, tracked by PID,
 * and killed by PID when they are done, when the run fails, and on Ctrl-C.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { get } from "node:http";
import { createInterface } from "node:readline";
export { freePort } from "../test/_support/free-port.js";

const running = new Set<ChildProcess>();

function killEverything(): void {
  for (const child of running) if (child.pid !== undefined) killPid(child.pid);
}

function killPid(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

process.on("exit", killEverything);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping every process the benchmark started`);
    killEverything();
    process.exit(130);
  });
}

/** True when `taskset` is on the PATH, so servers and load can each have a core. */
export const canPin = (() => {
  try {
    execFileSync("taskset", ["-c", "0", "true"], { stdio: "ignore", timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
})();

/** `command` run on CPU `core` when pinning is possible (taskset execs it: the PID stays the same). */
export function pinned(core: number, command: string[]): string[] {
  return canPin ? ["taskset", "-c", String(core), ...command] : command;
}

/** Registers a process the benchmark started, so it is killed with the rest; returns it. */
export function track<T extends ChildProcess>(child: T): T {
  running.add(child);
  child.once("exit", () => running.delete(child));
  return child;
}

export interface Started {
  child: ChildProcess;
  pid: number;
  /** Everything the process wrote on stderr so far, for error messages. */
  stderr: string[];
}

/**
 * Starts `command` with stdout discarded, or appended to the file `stdout` (so that the
 * benchmark can count the access-log lines a server wrote, and truncate the file between runs).
 */
export function start(command: string[], options: { env: NodeJS.ProcessEnv; cwd?: string; stdout?: string }): Started {
  const [executable, ...args] = command;
  const out = options.stdout === undefined ? "ignore" : openSync(options.stdout, "a");
  let child: ChildProcess;
  try {
    child = spawn(executable!, args, { env: options.env, cwd: options.cwd, stdio: ["ignore", out, "pipe"] });
  } finally {
    if (typeof out === "number") closeSync(out);
  }
  if (child.pid === undefined) throw new Error(`could not start ${executable}`);
  track(child);
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (line) => {
    if (stderr.length < 200) stderr.push(line);
  });
  return { child, pid: child.pid, stderr };
}

/** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves once it is gone. */
export async function stop(started: Started, graceMs = 12_000): Promise<void> {
  const { child } = started;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => killPid(started.pid), graceMs);
  await exited;
  clearTimeout(timer);
}

/** The process's resident set size in bytes, from /proc (undefined where there is no /proc). */
export function rssBytes(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU milliseconds the process has used, user + system over all its threads, from /proc
 * (clock ticks of 10 ms; undefined where there is no /proc).
 */
export function cpuMs(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** The status of one GET (0 when the connection failed), with the body; no keep-alive. */
export function httpGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const request = get(url, { headers, agent: false, timeout: 2_000 }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
      );
      response.on("error", () => resolve({ status: 0, body: "" }));
    });
    request.on("timeout", () => request.destroy());
    request.on("error", () => resolve({ status: 0, body: "" }));
  });
}

/**
 * Polls `url` every `pollMs` until it answers 200; throws with the process's stderr after `ms`
 * or when the process exits first.
 */
export async function waitUntilServing(
  started: Started,
  url: string,
  options: { headers?: Record<string, string>; ms?: number; pollMs?: number } = {},
): Promise<void> {
  const { headers = {}, ms = 30_000, pollMs = 10 } = options;
  const deadline = Date.now() + ms;
  for (;;) {
    if ((await httpGet(url, headers)).status === 200) return;
    if (started.child.exitCode !== null || started.child.signalCode !== null) {
      throw new Error(
        `the server exited (${started.child.exitCode ?? started.child.signalCode}) before serving:\n${started.stderr.join("\n")}`,
      );
    }
    if (Date.now() > deadline) throw new Error(`no 200 from ${url} within ${ms} ms:\n${started.stderr.join("\n")}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
