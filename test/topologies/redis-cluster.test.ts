import { bucketOf } from "../_support/key-buckets.js";
import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLUSTER_NODE_TIMEOUT_MS, type RedisCluster, startRedisCluster } from "../_support/redis-cluster.js";
import { ensureBinary } from "../e2e/_binary.js";
import {
  binaryServe,
  cleanUp,
  createKey,
  type Server,
  startServer,
  stopProcess,
  tempDatabaseUrl,
  waitFor,
} from "../e2e/_processes.js";
import { limiterLoad, type Tally } from "./_limiter-load.js";

/**
 * `petstore serve --limiter redis+cluster://...` on a Redis Cluster of three masters and three
 * replicas: a Free key per master (per slot range) under load, one master killed (SIGKILL).
 * Its replica takes over; meanwhile the answers are 503s with the contract's headers within
 * the limiter's timeout (admissions under --limiter-fail-open), service resumes by itself, and
 * the admissions the failover added (counts the master acknowledged and never replicated) are
 * measured.
 */

/** Each key's limit: a day's, so that no window ends during the test (a minute's could). */
const PER_DAY = 150;
/** Admissions a master may take between the test's read of its replica's lag and its kill. */
const IN_FLIGHT_BOUND = 10;
/** The limiter's timeout (the binary's default): a hit waits for Redis at most this long. */
const LIMITER_TIMEOUT_MS = 1_000;

let cluster: RedisCluster;
let admin: Cluster;
let db: string;
const servers: Server[] = [];

beforeAll(async () => {
  ensureBinary();
  cluster = await startRedisCluster();
  admin = new Cluster(cluster.ports.map((port) => ({ host: "127.0.0.1", port })));
  db = tempDatabaseUrl();
}, 120_000);

afterAll(async () => {
  admin?.disconnect();
  await cleanUp();
  await cluster?.stop();
});

/** The hash slot of a key's bucket. */
const slotOf = (id: string) => keySlots.get(id)!;
const keySlots = new Map<string, number>();

/** Free keys (limited to PER_DAY a day), one whose bucket lives on each master of `ports`, in that order. */
async function keysOn(ports: number[]): Promise<{ key: string; id: string; port: number }[]> {
  const found: { key: string; id: string; port: number }[] = [];
  for (let made = 0; found.length < ports.length; made++) {
    if (made > 60) throw new Error("no key hashed to every master in 60 tries");
    const { key, id } = await createKey(db, ["--plan", "free", "--per-minute", "100000", "--per-day", String(PER_DAY)]);
    const slot = Number(await admin.cluster("KEYSLOT", bucketOf(id)));
    keySlots.set(id, slot);
    const master = await cluster.masterOf(slot);
    const wanted = ports[found.length]!;
    if (master.port === wanted) found.push({ key, id, port: master.port });
  }
  return found;
}

describe("petstore serve on a Redis Cluster (3 masters, 3 replicas)", () => {
  it("says at start that it uses the cluster, and counts each key on the master of its slot", async () => {
    const server = await startServer([...binaryServe(db), "--limiter", cluster.url]);
    servers.push(server);
    const listening = server.stdout.find((line) => line.includes('"event":"listening"'))!;
    expect(JSON.parse(listening).limiter).toBe(cluster.url);
    const masters = (await cluster.nodes()).filter((node) => node.role === "master").map((node) => node.port);
    expect(masters).toHaveLength(3);
    const [key] = await keysOn([masters[1]!]);
    const api = (path: string) =>
      fetch(new URL(path, server.url), { headers: { authorization: `Bearer ${key!.key}` } });
    for (let i = 0; i < 3; i++) expect((await api("/v1/pets")).status).toBe(200);
    expect(await admin.hget(`petstore:limit:${bucketOf(key!.id)}`, "c2")).toBe("3");
    await stopProcess(server.child, "SIGTERM");
  }, 60_000);

  describe("when a master is killed under load (A, B, C: a key per master, on a server that fails closed; D: another on A's master, on one that fails open)", () => {
    let masters: number[];
    let closed: Server;
    let open: Server;
    let tallies: Record<"A" | "B" | "C" | "D", Tally>;
    let problems: string[];
    let replacementPort: number;
    /** What the replica lacked the moment before the kill: the counts the master took and had not yet sent it. */
    let behind = 0;

    beforeAll(async () => {
      masters = (await cluster.nodes()).filter((node) => node.role === "master").map((node) => node.port);
      const [a, b, c, d] = await keysOn([masters[0]!, masters[1]!, masters[2]!, masters[0]!]);
      [closed, open] = await Promise.all([
        startServer([...binaryServe(db), "--limiter", cluster.url]),
        startServer([...binaryServe(db), "--limiter", cluster.url, "--limiter-fail-open"]),
      ]);
      servers.push(closed, open);
      const load = limiterLoad([
        { name: "A", url: closed.url, key: a!.key, workers: 3 },
        { name: "B", url: closed.url, key: b!.key, workers: 3 },
        { name: "C", url: closed.url, key: c!.key, workers: 3 },
        { name: "D", url: open.url, key: d!.key, workers: 2 },
      ]);
      let killedAt = 0;
      let failedOverAt = 0;
      try {
        // Connections to A's master and its replica, opened before the kill so that reading them costs one round trip.
        const masterId = (await cluster.masterOf(slotOf(a!.id))).id;
        const replicaPort = (await cluster.nodes()).find((node) => node.masterId === masterId)?.port;
        const [onMaster, onReplica] = [new Redis(masters[0]!, "127.0.0.1"), new Redis(replicaPort!, "127.0.0.1")];
        await onReplica.call("READONLY");
        await waitFor(() => load.tally("A").admitted >= PER_DAY / 3, 30_000, {
          what: "a third of A's limit admitted before the kill",
        });
        const before = { ...load.tally("A") };
        const bucket = `petstore:limit:${bucketOf(a!.id)}`;
        const [counted, replicated] = await Promise.all([onMaster.hget(bucket, "c2"), onReplica.hget(bucket, "c2")]);
        behind = Number(counted) - Number(replicated ?? 0);
        await cluster.kill(masters[0]!, slotOf(a!.id));
        onMaster.disconnect();
        onReplica.disconnect();
        killedAt = load.mark();
        replacementPort = (await cluster.failedOver(masters[0]!)).port;
        failedOverAt = performance.now();
        await waitFor(() => load.tally("A").firstAdmittedAfterMark !== undefined, 30_000, {
          what: "a 200 for A from the promoted replica",
        });
        await waitFor(() => ["A", "B", "C"].every((name) => load.tally(name).refused >= 5), 30_000, {
          what: "every key past its limit (429s)",
        });
        await waitFor(() => load.tally("D").firstAdmittedAfterMark !== undefined, 30_000, {
          what: "D admitted after the kill",
        });
        console.info(`redis cluster: A had ${before.admitted} admitted when its master was killed`);
      } finally {
        await load.stop();
      }
      tallies = { A: load.tally("A"), B: load.tally("B"), C: load.tally("C"), D: load.tally("D") };
      problems = load.problems;
      const { A: ta, B: tb, C: tc, D: td } = tallies;
      const counted = Number(await admin.hget(`petstore:limit:${bucketOf(a!.id)}`, "c2"));
      console.info(
        `redis cluster, master killed under load (node timeout ${CLUSTER_NODE_TIMEOUT_MS} ms): replica serving after ${Math.round(failedOverAt - killedAt)} ms, ` +
          `A's first 200 after ${Math.round(ta.firstAdmittedAfterMark! - killedAt)} ms; ` +
          `A admitted ${ta.admitted} of ${PER_DAY} (extra: ${ta.admitted - PER_DAY}; its replica lacked ${behind} counts at the kill; the new master counted ${counted}), 503s ${ta.unavailable}, slowest ${Math.round(ta.slowestMs)} ms; ` +
          `B ${tb.admitted} (503s ${tb.unavailable}), C ${tc.admitted} (503s ${tc.unavailable}); ` +
          `fail-open D: ${td.admitted} admitted, ${td.refused} refused, ${td.unavailable} 503s`,
      );
    }, 120_000);

    it("has a replica take over from the killed master", () => {
      expect(replacementPort).not.toBe(masters[0]);
    });

    it("answers every request with 200, 429 or a 503 with the contract's headers", () => {
      expect(problems).toEqual([]);
    });

    it("tells the operator which node was lost", () => {
      expect(
        closed.stderr.some(
          (line) => line.includes('"event":"limiter node lost"') && line.includes(`"node":"127.0.0.1:${masters[0]}"`),
        ),
      ).toBe(true);
    });

    it("counts the keys whose masters lived exactly: never past the limit, short of it only by 503s", () => {
      // On a loaded machine a hit may outlast the limiter's timeout: answered 503, yet counted by its master.
      for (const tally of [tallies.B, tallies.C]) {
        expect(tally.admitted).toBeLessThanOrEqual(PER_DAY);
        expect(tally.admitted + tally.unavailable).toBeGreaterThanOrEqual(PER_DAY);
      }
    });

    it("admits the killed master's key again only for what it acknowledged and had not replicated", () => {
      // What the replica lacked, and what the master took between that read and the kill.
      expect(tallies.A.admitted - PER_DAY).toBeLessThanOrEqual(behind + IN_FLIGHT_BOUND);
    });

    it("answers the killed master's key with 503s meanwhile, on the server that fails closed", () => {
      expect(tallies.A.unavailable).toBeGreaterThan(0);
    });

    it("answers no request much past the limiter's timeout", () => {
      for (const tally of Object.values(tallies)) expect(tally.slowestMs).toBeLessThan(LIMITER_TIMEOUT_MS + 1_500);
    });

    it("admits, never answers 503, on the server that fails open", () => {
      expect(tallies.D.unavailable).toBe(0);
    });

    it("stops both servers with exit 0 on SIGTERM", async () => {
      const exits = await Promise.all([closed, open].map((server) => stopProcess(server.child, "SIGTERM")));
      expect(exits).toEqual([
        { code: 0, signal: null },
        { code: 0, signal: null },
      ]);
    });
  });
});
