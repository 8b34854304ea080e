import { type ChildProcess, spawn } from "node:child_process";

/** How long a Redis process may take to say it is ready (a busy shared machine included). */
const START_TIMEOUT_MS = 15_000;

/** Redis processes still running: killed (by PID) if the test process exits without stopping them. */
const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** Resolves once `child` exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** Kills `child` (SIGKILL, by PID) unless it exited, and resolves once it is gone. */
export async function killProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, "SIGKILL");
  await exited(child);
}

/**
 * Spawns `redis-server` or `redis-sentinel` (installed by scripts/test-tools.sh) with `args`
 * and resolves once its log says `ready` (a server: "Ready to accept connections"; a sentinel:
 * its "+monitor" line). Bounded: killed and rejected after 15 s; a process that exits first
 * rejects with its output (which names a port already in use).
 */
export function spawnRedisProcess(
  command: "redis-server" | "redis-sentinel",
  args: string[],
  ready = /Ready to accept connections/,
): Promise<ChildProcess> {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  child.once("exit", () => running.delete(child));
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(
      () => fail(new Error(`${command} did not start within ${START_TIMEOUT_MS} ms: ${output}`)),
      START_TIMEOUT_MS,
    );
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(error);
    };
    child.once("error", fail);
    child.once("exit", (code) => fail(new Error(`${command} exited (${code}) before it was ready: ${output.trim()}`)));
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        child.removeAllListeners("exit");
        // Still read, and dropped: a full pipe would block the process's log writes.
        for (const stream of [child.stdout!, child.stderr!]) stream.removeAllListeners("data").resume();
        resolve(child);
      }
    };
    child.stdout!.on("data", read);
    child.stderr!.on("data", read);
  });
}
