import { bucketOf } from "../_support/key-buckets.js";
import type { ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { Redis } from "ioredis";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../_support/free-port.js";
import { type PostgresServer, startPostgres } from "../_support/postgres-server.js";
import { killProcess, spawnRedisProcess } from "../_support/redis-process.js";
import { makeTestCertificates, type TestCertificates } from "../_support/tls-certificates.js";
import { ensureBinary } from "../e2e/_binary.js";
import { client } from "../e2e/_http.js";
import {
  binaryServe,
  cleanUp,
  cli,
  createKey,
  startServer,
  stopProcess,
  tempDatabaseUrl,
  waitFor,
} from "../e2e/_processes.js";

/**
 * PostgreSQL with `ssl = on` and Redis on a TLS port, both with a certificate from a CA the test
 * makes (openssl): the binary verifies the server (`sslmode=verify-full` with libpq's
 * `sslrootcert=PATH`, or the CA in NODE_EXTRA_CA_CERTS; `rediss://` with NODE_EXTRA_CA_CERTS),
 * and refuses to start, in one line naming TLS, on a certificate from another CA, one for
 * another host name, and a server that does not speak TLS. Each server is reconfigured in
 * place between the cases (PostgreSQL reloads its certificate on SIGHUP, Redis on CONFIG SET).
 */

let certs: TestCertificates;

beforeAll(() => {
  ensureBinary();
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  certs = makeTestCertificates({ uid: id("-u"), gid: id("-g") });
});

afterAll(async () => {
  await cleanUp();
  certs?.remove();
});

/** The binary's one line when it cannot start (exit 1), e.g. `serve` with `args`. */
async function refusal(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const result = await cli(args, { env: { ...process.env, ...env } });
  expect(result.code).toBe(1);
  const lines = result.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe("PostgreSQL over TLS", () => {
  let pg: PostgresServer;
  let admin: postgres.Sql;
  let url: string;

  /** Points the server at another certificate (or TLS off) and waits until new connections see it. */
  async function reconfigure(settings: Record<string, string>): Promise<void> {
    for (const [name, value] of Object.entries(settings)) await admin.unsafe(`ALTER SYSTEM SET ${name} = '${value}'`);
    await admin`SELECT pg_reload_conf()`;
    const wanted = Object.values(settings).join(",");
    let shown: string[] = [];
    await waitFor(
      async () => {
        const fresh = postgres(pg.url(), { max: 1, onnotice: () => {} });
        try {
          shown = await Promise.all(
            Object.keys(settings).map(async (name) => (await fresh.unsafe(`SHOW ${name}`))[0]![name] as string),
          );
        } finally {
          await fresh.end();
        }
        return shown.join(",") === wanted;
      },
      10_000,
      { every: 50, what: () => `PostgreSQL taking ${wanted} (it shows ${shown.join(",")})` },
    );
  }

  beforeAll(async () => {
    // TLS turned on by ALTER SYSTEM, not on the command line (which would win over every later change).
    pg = await startPostgres();
    await pg.createDatabase("petstore");
    admin = postgres(pg.url(), { max: 1, onnotice: () => {} });
    await reconfigure({ ssl_cert_file: certs.server.cert, ssl_key_file: certs.server.key, ssl: "on" });
    url = `postgres://postgres@127.0.0.1:${pg.port}/petstore?sslmode=verify-full`;
  }, 60_000);

  afterAll(async () => {
    await admin?.end();
    await pg?.destroy();
  });

  it("serves with sslmode=verify-full and the CA as sslrootcert, every connection encrypted", async () => {
    const db = `${url}&sslrootcert=${certs.ca}`;
    const server = await startServer(binaryServe(db));
    const { key } = await createKey(db);
    expect(
      (await client(server.url, key)("/v1/pets", { method: "POST", json: { name: "Sealed", categoryId: 1 } })).status,
    ).toBe(201);
    const connections =
      await admin`SELECT s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.datname = 'petstore'`;
    expect(connections.length).toBeGreaterThan(0);
    expect(connections.every((row) => row.ssl === true)).toBe(true);
    await stopProcess(server.child, "SIGTERM");
  }, 60_000);

  it("takes the CA from NODE_EXTRA_CA_CERTS as well", async () => {
    const server = await startServer(binaryServe(url), { env: { ...process.env, NODE_EXTRA_CA_CERTS: certs.ca } });
    expect((await fetch(new URL("/healthz", server.url))).status).toBe(200);
    await stopProcess(server.child, "SIGTERM");
  }, 60_000);

  it("refuses a certificate from a CA it was not given, in one line naming TLS", async () => {
    await reconfigure({ ssl_cert_file: certs.untrusted.cert, ssl_key_file: certs.untrusted.key });
    const line = await refusal(binaryServe(`${url}&sslrootcert=${certs.ca}`).slice(1));
    console.info(`tls, postgres, another CA: ${line}`);
    expect(line).toMatch(new RegExp(`^petstore: cannot open postgres://127\\.0\\.0\\.1:${pg.port}/petstore.*: TLS: `));
  }, 60_000);

  it("refuses a certificate for another host name, in one line naming TLS", async () => {
    await reconfigure({ ssl_cert_file: certs.otherHost.cert, ssl_key_file: certs.otherHost.key });
    const line = await refusal(binaryServe(`${url}&sslrootcert=${certs.ca}`).slice(1));
    console.info(`tls, postgres, another host name: ${line}`);
    expect(line).toMatch(/: TLS: .*(altnames|host ?name|IP)/i);
  }, 60_000);

  it("refuses a server that does not speak TLS, in one line naming TLS", async () => {
    await reconfigure({ ssl: "off" });
    const line = await refusal(binaryServe(`${url}&sslrootcert=${certs.ca}`).slice(1));
    console.info(`tls, postgres, no TLS: ${line}`);
    expect(line).toContain(
      `: TLS: the server at 127.0.0.1:${pg.port} does not accept TLS connections (sslmode=verify-full)`,
    );
  }, 60_000);
});

describe("Redis over TLS (rediss://)", () => {
  let redis: ChildProcess;
  let tlsPort: number;
  /** The same server's plain port: how the test reconfigures it, and a server that does not speak TLS for rediss://. */
  let plainPort: number;
  let admin: Redis;

  beforeAll(async () => {
    [tlsPort, plainPort] = [await freePort(), await freePort()];
    redis = await spawnRedisProcess("redis-server", [
      "--port",
      String(plainPort),
      "--tls-port",
      String(tlsPort),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--tls-cert-file",
      certs.server.cert,
      "--tls-key-file",
      certs.server.key,
      "--tls-ca-cert-file",
      certs.ca,
      "--tls-auth-clients",
      "no",
    ]);
    admin = new Redis(plainPort, "127.0.0.1");
  }, 30_000);

  afterAll(async () => {
    admin?.disconnect();
    if (redis) await killProcess(redis);
  });

  it("keeps the limits in Redis over TLS with the CA in NODE_EXTRA_CA_CERTS", async () => {
    const db = tempDatabaseUrl();
    const { key, id } = await createKey(db, ["--plan", "free", "--per-minute", "100000", "--per-day", "3"]);
    const server = await startServer([...binaryServe(db), "--limiter", `rediss://127.0.0.1:${tlsPort}`], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: certs.ca },
    });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await client(server.url, key)("/v1/pets")).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(await admin.hget(`petstore:limit:${bucketOf(id)}`, "c2")).toBe("3");
    const clients = await admin.client("LIST");
    expect(String(clients)).toContain(`laddr=127.0.0.1:${tlsPort}`);
    await stopProcess(server.child, "SIGTERM");
  }, 60_000);

  it("refuses a certificate from a CA it does not trust, in one line naming TLS", async () => {
    const line = await refusal([
      ...binaryServe(tempDatabaseUrl()).slice(1),
      "--limiter",
      `rediss://127.0.0.1:${tlsPort}`,
    ]);
    console.info(`tls, redis, another CA: ${line}`);
    expect(line).toMatch(new RegExp(`^petstore: cannot use limiter rediss://127\\.0\\.0\\.1:${tlsPort}: TLS: `));
  }, 60_000);

  it("refuses a certificate for another host name, in one line naming TLS", async () => {
    await admin.config("SET", "tls-cert-file", certs.otherHost.cert, "tls-key-file", certs.otherHost.key);
    try {
      const line = await refusal(
        [...binaryServe(tempDatabaseUrl()).slice(1), "--limiter", `rediss://127.0.0.1:${tlsPort}`],
        { NODE_EXTRA_CA_CERTS: certs.ca },
      );
      console.info(`tls, redis, another host name: ${line}`);
      expect(line).toMatch(/: TLS: .*(altnames|host ?name|IP)/i);
    } finally {
      await admin.config("SET", "tls-cert-file", certs.server.cert, "tls-key-file", certs.server.key);
    }
  }, 60_000);

  it("refuses a server that does not speak TLS, in one line naming TLS", async () => {
    const line = await refusal(
      [...binaryServe(tempDatabaseUrl()).slice(1), "--limiter", `rediss://127.0.0.1:${plainPort}`],
      { NODE_EXTRA_CA_CERTS: certs.ca },
    );
    console.info(`tls, redis, no TLS: ${line}`);
    expect(line).toBe(
      `petstore: cannot use limiter rediss://127.0.0.1:${plainPort}: TLS: no answer within 5 s to the TLS handshake (does that port speak TLS?)`,
    );
  }, 60_000);
});
