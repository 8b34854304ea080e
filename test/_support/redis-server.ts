import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";

/** How long `redis-server` may take to say it is ready (a busy shared machine included). */
const START_TIMEOUT_MS = 15_000;

/** A `redis-server` of our own, in a temporary directory, on a loopback port. */
export interface RedisServer {
  port: number;
  /** `redis://127.0.0.1:PORT`. */
  url: string;
  /** The server's process id (it may change with `restart`). */
  pid(): number;
  /** Sends a signal to the server's process (`SIGSTOP`, `SIGCONT`, `SIGKILL`). */
  signal(signal: NodeJS.Signals): void;
  /** Kills the server (SIGKILL) and waits until it is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port, with an empty data set and an empty script cache. */
  restart(): Promise<void>;
  /** Kills it and removes its directory; for `afterAll`. */
  stop(): Promise<void>;
}

/** Servers still running: killed (by PID) if the process exits without stopping them. */
const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** Spawns `redis-server` on `port` and resolves once it accepts connections. */
function spawnRedis(port: number, dir: string): Promise<ChildProcess> {
  // No persistence: each start is an empty server, as after a failover to an empty replica.
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "yes"];
  const child = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  child.once("exit", () => running.delete(child));
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => fail(new Error(`redis-server did not start within ${START_TIMEOUT_MS} ms: ${output}`)), START_TIMEOUT_MS);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(error);
    };
    child.once("error", fail);
    child.once("exit", (code) => fail(new Error(`redis-server exited (${code}) before it was ready: ${output.trim()}`)));
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer);
        child.removeAllListeners("exit");
        resolve(child);
      }
    });
  });
}

/**
 * Starts `redis-server` (installed by `scripts/test-tools.sh`) in a new temporary directory on
 * a free loopback port, retrying with another port when that one was taken meanwhile. Stop it
 * with `stop()` (by its process id), also when a test failed.
 */
export async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), "petstore-redis-"));
  let child: ChildProcess | undefined;
  let port = 0;
  for (let attempt = 1; child === undefined; attempt++) {
    port = await freePort();
    try {
      child = await spawnRedis(port, dir);
    } catch (error) {
      if (attempt >= 5 || !/Address already in use/.test(String(error))) {
        rmSync(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }
  let current: ChildProcess = child;
  const kill = async () => {
    process.kill(current.pid!, "SIGKILL");
    await exited(current);
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pid: () => current.pid!,
    signal: (signal) => process.kill(current.pid!, signal),
    kill,
    restart: async () => {
      current = await spawnRedis(port, dir);
    },
    stop: async () => {
      if (current.exitCode === null && current.signalCode === null) await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
