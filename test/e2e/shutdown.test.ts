import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ensureBinary } from "./_binary.js";
import {
  binaryServe,
  cleanUp,
  createKey,
  freePort,
  startServer,
  stopProcess,
  tempDatabaseUrl,
  waitFor,
} from "./_processes.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

/**
 * A POST /v1/pets whose body arrives in two parts: the server is handling it (headers read,
 * body awaited) from the first part until `finish()` sends the rest.
 */
function slowCreate(url: string, key: string, name: string) {
  const body = JSON.stringify({ name, categoryId: 1 });
  const half = Math.floor(body.length / 2);
  const { hostname, port } = new URL(url);
  const req = request({
    host: hostname,
    port,
    method: "POST",
    path: "/v1/pets",
    agent: false,
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
    },
  });
  const response = new Promise<{ status: number; body: string } | Error>((resolve) => {
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, body: text }));
      res.on("error", resolve);
    });
    req.on("error", resolve);
  });
  req.flushHeaders();
  req.write(body.slice(0, half));
  return { response, finish: () => req.end(body.slice(half)), abort: () => req.destroy() };
}

/** The binary on `db` with its metrics listener, whose in-flight gauge tells when requests are being handled. */
async function serverWithMetrics(db: string) {
  for (let attempt = 1; ; attempt++) {
    const metricsPort = await freePort();
    try {
      const server = await startServer([...binaryServe(db), "--metrics-listen", `127.0.0.1:${metricsPort}`]);
      return { server, metrics: `http://127.0.0.1:${metricsPort}/metrics` };
    } catch (error) {
      if (attempt >= 5 || !/in use/i.test(String(error))) throw error;
    }
  }
}

/** Waits until the server is answering `count` requests: their handlers started and await their bodies. */
async function inFlight(metrics: string, count: number): Promise<void> {
  await vi.waitFor(
    async () => {
      const text = await (await fetch(metrics)).text();
      expect(text).toMatch(new RegExp(`^petstore_http_requests_in_flight ${count}$`, "m"));
    },
    { timeout: 10_000, interval: 20 },
  );
}

describe("stopping the binary with SIGTERM", () => {
  it("stops accepting, lets in-flight requests finish, and exits 0", async () => {
    const db = tempDatabaseUrl("sigterm.db");
    const { key } = await createKey(db);
    const { server, metrics } = await serverWithMetrics(db);
    const slow = Array.from({ length: 5 }, (_, i) => slowCreate(server.url, key, `in-flight-${i}`));
    // The server read the headers and started each handler, which now waits for the body.
    await inFlight(metrics, 5);
    const stopped = stopProcess(server.child, "SIGTERM");
    await waitFor(() => server.stdout.some((line) => line.includes('"event":"stopping"')));

    await expect(fetch(new URL("/healthz", server.url))).rejects.toThrow();
    for (const request of slow) request.finish();
    const answers = await Promise.all(slow.map((request) => request.response));
    expect(answers.map((answer) => (answer instanceof Error ? answer.message : answer.status))).toEqual([
      201, 201, 201, 201, 201,
    ]);
    expect(await stopped).toEqual({ code: 0, signal: null });

    const events = server.stdout.map((line) => JSON.parse(line) as { event?: string; status?: number });
    const stopping = events.findIndex((entry) => entry.event === "stopping");
    const created = events.flatMap((entry, index) => (entry.status === 201 ? [index] : []));
    expect(created).toHaveLength(5);
    expect(Math.min(...created)).toBeGreaterThan(stopping);
    expect(events.at(-1)?.event).toBe("stopped");
    expect(events.some((entry) => entry.event === "grace period over")).toBe(false);
  }, 30_000);

  it("gives a request that never finishes 10 s, then exits 0 anyway", async () => {
    const db = tempDatabaseUrl("stuck.db");
    const { key } = await createKey(db);
    const { server, metrics } = await serverWithMetrics(db);
    const stuck = slowCreate(server.url, key, "never-finished");
    await inFlight(metrics, 1);
    const exit = await stopProcess(server.child, "SIGTERM");
    stuck.abort();
    expect(exit).toEqual({ code: 0, signal: null });
    // The server says the grace period (its own timer, 10 s) ran out with the request unfinished:
    // an event in its log, not a duration measured here, which would depend on the machine's load.
    const events = server.stdout.map(
      (line) => JSON.parse(line) as { event?: string; graceMs?: number; status?: number },
    );
    const names = events.flatMap((entry) => (entry.event === undefined ? [] : [entry.event]));
    expect(names.slice(-3)).toEqual(["stopping", "grace period over", "stopped"]);
    expect(events.find((entry) => entry.event === "grace period over")?.graceMs).toBe(10_000);
    expect(events.some((entry) => entry.status === 201)).toBe(false);
  }, 30_000);
});
