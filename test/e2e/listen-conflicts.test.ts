import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BINARY, ensureBinary, ROOT } from "./_binary.js";
import { cleanUp, cli, freePort, type Server, startServer, tempDatabaseUrl } from "./_processes.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

/** A server on a free port, started again when another process took the port meanwhile. */
async function serverOn(
  db: string,
  extra: () => Promise<string[]> = async () => [],
): Promise<{ server: Server; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      const server = await startServer([
        BINARY,
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        String(port),
        "--db",
        db,
        ...(await extra()),
      ]);
      return { server, port };
    } catch (error) {
      if (attempt >= 5 || !/in use/i.test(String(error))) throw error;
    }
  }
}

/** The error lines a failed start printed (stderr, without the JSON log lines). */
function errorLines(stderr: string): string[] {
  return stderr
    .trimEnd()
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("{"));
}

describe("a port already in use", () => {
  let first: { server: Server; port: number };
  let metricsPort: number;

  beforeAll(async () => {
    first = await serverOn(tempDatabaseUrl("first.db"));
    // A metrics listener on a port of its own, held by a second server.
    const second = await serverOn(tempDatabaseUrl("second.db"), async () => [
      "--metrics-listen",
      `127.0.0.1:${await freePort()}`,
    ]);
    metricsPort = Number(
      /"port":(\d+)/.exec(second.server.stdout.find((line) => line.includes('"metrics listening"'))!)![1],
    );
  }, 60_000);

  it("is an error for the API's listener: one line, exit 1, the first server untouched", async () => {
    const result = await cli([
      "serve",
      "--host",
      "127.0.0.1",
      "--port",
      String(first.port),
      "--db",
      tempDatabaseUrl("second-try.db"),
    ]);
    expect(result.code).toBe(1);
    expect(errorLines(result.stderr)).toEqual([
      `petstore: cannot listen on 127.0.0.1 port ${first.port}: port ${first.port} is in use by another process: stop that one, or choose another port with --port (or PETSTORE_PORT)`,
    ]);
    expect(result.stdout).not.toContain('"event":"listening"');
    expect((await fetch(`http://127.0.0.1:${first.port}/healthz`)).status).toBe(200);
  }, 30_000);

  it("is an error for the metrics listener", async () => {
    const result = await cli([
      "serve",
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--db",
      tempDatabaseUrl("third.db"),
      "--metrics-listen",
      `127.0.0.1:${metricsPort}`,
    ]);
    expect(result.code).toBe(1);
    expect(errorLines(result.stderr)).toEqual([
      `petstore: cannot listen for metrics on 127.0.0.1 port ${metricsPort}: port ${metricsPort} is in use by another process: stop that one, or choose another port with --metrics-listen HOST:PORT`,
    ]);
  }, 30_000);

  it("is an error under Deno too", async () => {
    const script = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> })
      .scripts["start:deno"]!;
    const args = script
      .split(" ")
      .slice(1)
      .map((arg) => (arg === "--allow-net=127.0.0.1:8080" ? `--allow-net=127.0.0.1:${first.port}` : arg));
    const result = await cli([...args, "--port", String(first.port), "--db", tempDatabaseUrl("deno.db")], {
      executable: join(ROOT, "node_modules/.bin/deno"),
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: "1" },
    });
    expect(result.code).toBe(1);
    expect(errorLines(result.stderr)).toEqual([
      `petstore: cannot listen on 127.0.0.1 port ${first.port}: port ${first.port} is in use by another process: stop that one, or choose another port with --port (or PETSTORE_PORT)`,
    ]);
  }, 60_000);
});

describe("the API and the metrics listener on one address", () => {
  it.each([
    ["127.0.0.1", "127.0.0.1:18123"],
    ["0.0.0.0", "127.0.0.1:18123"],
    ["127.0.0.1", "[::]:18123"],
  ])("are refused before anything starts (--host %s, --metrics-listen %s)", async (host, metrics) => {
    const result = await cli([
      "serve",
      "--host",
      host,
      "--port",
      "18123",
      "--db",
      ":memory:",
      "--metrics-listen",
      metrics,
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr.split("\n")[0]).toBe(
      `petstore: --metrics-listen ${metrics} is the API's own address: give the metrics listener a port of its own`,
    );
  });
});
