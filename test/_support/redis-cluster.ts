import type { ChildProcess } from "node:child_process";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./free-port.js";
import { killProcess, spawnRedisProcess } from "./redis-process.js";
import { waitForValue } from "./wait-for.js";

const run = promisify(execFile);

/**
 * How long a node may go unheard before the others count it failed (Redis's default is 15 s):
 * short, so that a failover here takes about 2 s, and the same setting a team would lower.
 */
export const CLUSTER_NODE_TIMEOUT_MS = 1_000;

/** One node as CLUSTER NODES describes it now. */
export interface ClusterNode {
  id: string;
  port: number;
  role: "master" | "replica";
  /** The master's id, for a replica. */
  masterId?: string;
  /** Hash slot ranges it serves, for a master: [from, to] inclusive. */
  slots: [number, number][];
  /** Marked failed (`fail`) by the cluster. */
  failed: boolean;
}

/** Three masters and three replicas on loopback ports, as `redis-cli --cluster create --cluster-replicas 1` makes them. */
export interface RedisCluster {
  /** The nodes' ports, in the order they were started. */
  readonly ports: number[];
  /** `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,...`: every node as a seed, as the binary takes a cluster. */
  readonly url: string;
  /** The topology as a living node sees it now. */
  nodes(): Promise<ClusterNode[]>;
  /** The master that serves `slot` now. */
  masterOf(slot: number): Promise<ClusterNode>;
  /**
   * Kills the node on `port` (SIGKILL, by PID) and resolves once it is gone. `slot`, one it
   * serves when the caller knows it, spares the look at the topology before the kill.
   */
  kill(port: number, slot?: number): Promise<void>;
  /**
   * Resolves once the master killed on `port` was replaced: one of its replicas serves its
   * slots and every living node says `cluster_state:ok`. Bounded by `ms`.
   */
  failedOver(port: number, ms?: number): Promise<ClusterNode>;
  /** Kills every node and removes the directory; for `afterAll`. */
  stop(): Promise<void>;
}

/** `redis-cli` against one node, its output as text. */
async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...args], { timeout: 10_000 });
  return stdout;
}

/** CLUSTER NODES's lines, parsed. */
function parseNodes(text: string): ClusterNode[] {
  return text
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [id, address, flags, master, , , , , ...slots] = line.split(" ");
      const flagSet = new Set(flags!.split(","));
      return {
        id: id!,
        port: Number(address!.split("@")[0]!.split(":")[1]),
        role: flagSet.has("master") ? "master" : "replica",
        ...(master !== "-" && { masterId: master! }),
        slots: slots
          .filter((slot) => /^\d/.test(slot))
          .map((slot) => {
            const [from, to = from] = slot.split("-").map(Number);
            return [from!, to!] as [number, number];
          }),
        failed: flagSet.has("fail"),
      } satisfies ClusterNode;
    });
}

/** Starts one cluster node on free ports (its port and its cluster bus port), retrying when one was taken meanwhile. */
async function startNode(dir: string): Promise<{ port: number; child: ChildProcess }> {
  for (let attempt = 1; ; attempt++) {
    const [port, busPort] = [await freePort(), await freePort()];
    const nodeDir = join(dir, String(port));
    mkdirSync(nodeDir, { recursive: true });
    try {
      // No persistence, as in redis-server.ts: what a failover keeps is what was replicated.
      const child = await spawnRedisProcess("redis-server", [
        "--port",
        String(port),
        "--cluster-port",
        String(busPort),
        "--bind",
        "127.0.0.1",
        "--dir",
        nodeDir,
        "--save",
        "",
        "--appendonly",
        "no",
        "--protected-mode",
        "yes",
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        String(CLUSTER_NODE_TIMEOUT_MS),
        // A replica syncs at once instead of 5 s later (Redis waits for more replicas by default).
        "--repl-diskless-sync-delay",
        "0",
      ]);
      return { port, child };
    } catch (error) {
      if (attempt >= 5 || !/Address already in use/.test(String(error))) throw error;
    }
  }
}

/**
 * Starts a Redis Cluster of three masters, each with one replica (six `redis-server
 * --cluster-enabled yes` processes on free loopback ports, joined by `redis-cli --cluster
 * create --cluster-replicas 1`), and resolves once every node says `cluster_state:ok`. Bounded
 * (about 30 s at most); stop it with `stop()`, by PID, also when a test failed.
 */
export async function startRedisCluster(): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), "petstore-redis-cluster-"));
  const children = new Map<number, ChildProcess>();
  const stop = async () => {
    await Promise.all([...children.values()].map(killProcess));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const { port, child } of await Promise.all(Array.from({ length: 6 }, () => startNode(dir))))
      children.set(port, child);
    const ports = [...children.keys()];
    await run(
      "redis-cli",
      ["--cluster", "create", ...ports.map((port) => `127.0.0.1:${port}`), "--cluster-replicas", "1", "--cluster-yes"],
      { timeout: 30_000 },
    );
    const living = () =>
      ports.filter((port) => children.get(port)!.exitCode === null && children.get(port)!.signalCode === null);
    const allOk = async () => {
      const states = await Promise.all(living().map((port) => cli(port, "cluster", "info")));
      return states.every((state) => /cluster_state:ok/.test(state)) ? true : undefined;
    };
    await waitForValue(allOk, 20_000, { what: "every node of the new cluster says cluster_state:ok" });
    // A replica that never synced cannot take over: wait for each one's link to its master.
    const synced = async () => {
      const replication = await Promise.all(ports.map((port) => cli(port, "info", "replication")));
      return replication.every((text) => /role:master/.test(text) || /master_link_status:up/.test(text))
        ? true
        : undefined;
    };
    await waitForValue(synced, 20_000, { what: "every replica synced with its master" });
    const nodes = async () => parseNodes(await cli(living()[0]!, "cluster", "nodes"));
    /** A slot a killed master served, known before it was killed: its replacement serves it. */
    const firstSlotOf = new Map<number, number | undefined>();
    const masterOf = async (slot: number) => {
      const master = (await nodes()).find(
        (node) => node.role === "master" && !node.failed && node.slots.some(([from, to]) => slot >= from && slot <= to),
      );
      if (master === undefined) throw new Error(`no master serves slot ${slot} now`);
      return master;
    };
    return {
      ports,
      url: `redis+cluster://${ports.map((port) => `127.0.0.1:${port}`).join(",")}`,
      nodes,
      masterOf,
      kill: async (port, slot) => {
        firstSlotOf.set(port, slot ?? (await nodes()).find((node) => node.port === port)?.slots[0]?.[0]);
        await killProcess(children.get(port)!);
      },
      failedOver: async (port, ms = 20_000) => {
        const slot = firstSlotOf.get(port);
        if (slot === undefined) throw new Error(`${port} was not a master when it was killed`);
        return waitForValue(
          async () => {
            const current = await nodes();
            const replaced = current.find(
              (node) =>
                node.port !== port &&
                node.role === "master" &&
                !node.failed &&
                node.slots.some(([from, to]) => slot >= from && slot <= to),
            );
            return replaced && (await allOk()) ? replaced : undefined;
          },
          ms,
          { what: `a replica of ${port} serving its slots, and cluster_state:ok everywhere` },
        );
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
