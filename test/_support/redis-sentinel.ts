import { type ChildProcess, execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./free-port.js";
import { killProcess, spawnRedisProcess } from "./redis-process.js";
import { waitForValue } from "./wait-for.js";

const run = promisify(execFile);

/** The name the sentinels know the master by. */
export const SENTINEL_MASTER_NAME = "petstore";
/** How long a master may go unheard before a sentinel counts it down (Redis's default is 30 s). */
export const SENTINEL_DOWN_AFTER_MS = 1_000;

/** One master, one replica and three sentinels (quorum 2) on loopback ports. */
export interface RedisSentinels {
  /** `redis+sentinel://127.0.0.1:S1,127.0.0.1:S2,127.0.0.1:S3/petstore`, as the binary takes it. */
  readonly url: string;
  readonly sentinelPorts: number[];
  /** The data nodes' ports: the first master, then its replica. */
  readonly dataPorts: number[];
  /** The master's port, as every sentinel names it now (undefined while they disagree). */
  master(): Promise<number | undefined>;
  /** Asks a sentinel for a failover (`SENTINEL FAILOVER`) and resolves once every sentinel names the new master and it says role:master. */
  failover(ms?: number): Promise<number>;
  /**
   * Kills the master (SIGKILL, by PID), the one on `port` when the caller knows it (no sentinel
   * is asked first, so that nothing happens between the caller's last look and the kill);
   * resolves once the sentinels promoted the replica and it says role:master.
   */
  killMaster(port?: number, ms?: number): Promise<number>;
  /** Resolves once every data node still running is in sync: the master has a replica whose link is up, or no replica is left. */
  synced(ms?: number): Promise<void>;
  /** Kills every process and removes the directory; for `afterAll`. */
  stop(): Promise<void>;
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...args], { timeout: 10_000 });
  return stdout;
}

/** Starts a process on a free port (`start(port)`), another one when the port was taken meanwhile. */
async function onFreshPort(
  start: (port: number) => Promise<ChildProcess>,
): Promise<{ port: number; child: ChildProcess }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return { port, child: await start(port) };
    } catch (error) {
      if (attempt >= 5 || !/Address already in use/.test(String(error))) throw error;
    }
  }
}

/**
 * Starts a master and its replica (`redis-server --replicaof`) and three `redis-sentinel`s
 * watching it (quorum 2, `down-after-milliseconds` 1000, failover timeout 5 s), on free
 * loopback ports, and resolves once the replica is in sync and every sentinel knows the replica
 * and the two other sentinels. Bounded (about 40 s at most); `stop()` kills all by PID.
 */
export async function startRedisSentinels(): Promise<RedisSentinels> {
  const dir = mkdtempSync(join(tmpdir(), "petstore-redis-sentinel-"));
  const data = new Map<number, ChildProcess>();
  const sentinels = new Map<number, ChildProcess>();
  const stop = async () => {
    await Promise.all([...data.values(), ...sentinels.values()].map(killProcess));
    rmSync(dir, { recursive: true, force: true });
  };
  const dataNode = (replicaOf?: number) => (port: number) => {
    const nodeDir = join(dir, `data-${port}`);
    mkdirSync(nodeDir, { recursive: true });
    // No persistence; a replica syncs at once instead of 5 s later (Redis waits for more replicas by default).
    const args = [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      nodeDir,
      "--save",
      "",
      "--appendonly",
      "no",
      "--repl-diskless-sync-delay",
      "0",
    ];
    return spawnRedisProcess(
      "redis-server",
      replicaOf === undefined ? args : [...args, "--replicaof", "127.0.0.1", String(replicaOf)],
    );
  };
  try {
    const first = await onFreshPort(dataNode());
    data.set(first.port, first.child);
    const replica = await onFreshPort(dataNode(first.port));
    data.set(replica.port, replica.child);
    for (let i = 0; i < 3; i++) {
      const sentinel = await onFreshPort((port) => {
        // A sentinel rewrites its configuration file: one of its own, writable.
        const file = join(dir, `sentinel-${port}.conf`);
        writeFileSync(
          file,
          [
            `port ${port}`,
            "bind 127.0.0.1",
            `dir ${dir}`,
            `sentinel monitor ${SENTINEL_MASTER_NAME} 127.0.0.1 ${first.port} 2`,
            `sentinel down-after-milliseconds ${SENTINEL_MASTER_NAME} ${SENTINEL_DOWN_AFTER_MS}`,
            `sentinel failover-timeout ${SENTINEL_MASTER_NAME} 5000`,
            `sentinel parallel-syncs ${SENTINEL_MASTER_NAME} 1`,
            "",
          ].join("\n"),
        );
        return spawnRedisProcess("redis-sentinel", [file], /\+monitor master/);
      });
      sentinels.set(sentinel.port, sentinel.child);
    }
    const sentinelPorts = [...sentinels.keys()];
    const living = (port: number) => {
      const child = data.get(port)!;
      return child.exitCode === null && child.signalCode === null;
    };
    const master = async (): Promise<number | undefined> => {
      const named = await Promise.all(
        sentinelPorts.map(async (port) =>
          Number((await cli(port, "sentinel", "get-master-addr-by-name", SENTINEL_MASTER_NAME)).trim().split("\n")[1]),
        ),
      );
      return named.every((port) => port === named[0]) ? named[0] : undefined;
    };
    const synced = async (ms = 20_000) => {
      await waitForValue(
        async () => {
          const nodes = [...data.keys()].filter(living);
          const replication = await Promise.all(nodes.map((port) => cli(port, "info", "replication")));
          const masters = replication.filter((text) => /role:master/.test(text));
          if (masters.length !== 1) return undefined;
          return nodes.length === 1 ||
            replication.every((text) => /role:master/.test(text) || /master_link_status:up/.test(text))
            ? true
            : undefined;
        },
        ms,
        { what: "one master and every living replica in sync" },
      );
    };
    /** Resolves once every sentinel names a master other than `old` and that master says role:master. */
    const promotedFrom = (old: number, ms: number) =>
      waitForValue(
        async () => {
          const now = await master();
          if (now === undefined || now === old) return undefined;
          return /role:master/.test(await cli(now, "info", "replication")) ? now : undefined;
        },
        ms,
        { what: `the sentinels agreeing on a master other than ${old}` },
      );
    await synced();
    await waitForValue(
      async () => {
        const views = await Promise.all(
          sentinelPorts.map(async (port) => {
            const replicas = await cli(port, "sentinel", "replicas", SENTINEL_MASTER_NAME);
            const others = await cli(port, "sentinel", "sentinels", SENTINEL_MASTER_NAME);
            return (
              replicas.includes(String(replica.port)) &&
              sentinelPorts.filter((other) => other !== port).every((other) => others.includes(String(other)))
            );
          }),
        );
        return views.every(Boolean) ? true : undefined;
      },
      20_000,
      { what: "every sentinel knowing the replica and the two other sentinels" },
    );
    return {
      url: `redis+sentinel://${sentinelPorts.map((port) => `127.0.0.1:${port}`).join(",")}/${SENTINEL_MASTER_NAME}`,
      sentinelPorts,
      dataPorts: [first.port, replica.port],
      master,
      failover: async (ms = 20_000) => {
        const old = (await master())!;
        await cli(sentinelPorts[0]!, "sentinel", "failover", SENTINEL_MASTER_NAME);
        return promotedFrom(old, ms);
      },
      killMaster: async (port, ms = 20_000) => {
        const old = port ?? (await master())!;
        await killProcess(data.get(old)!);
        return promotedFrom(old, ms);
      },
      synced,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
