import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";
import { exited, spawnRedisProcess } from "./redis-process.js";

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

/** Spawns `redis-server` on `port` and resolves once it accepts connections. */
function spawnRedis(port: number, dir: string): Promise<ChildProcess> {
  // No persistence: each start is an empty server, as after a failover to an empty replica.
  return spawnRedisProcess("redis-server", [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    "no",
    "--daemonize",
    "no",
    "--protected-mode",
    "yes",
  ]);
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
