import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinary, ROOT } from "./_binary.js";
import { client } from "./_http.js";
import {
  binaryServe,
  cleanUp,
  createKey,
  onFreePort,
  type Server,
  startServer,
  stopProcess,
  tempDatabaseUrl,
} from "./_processes.js";
import { parseResponse, rawExchange, rawRequest, rawTrickle } from "./_raw-http.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

/** The deadline the suite configures: short, so that the test takes a second, not 30. */
const DEADLINE_MS = 800;
/** The keys' limits: high enough that no limit answers before the deadline. */
const ENTERPRISE = ["--plan", "enterprise", "--per-minute", "100000", "--per-day", "1000000"];

/** A request whose body never arrives in full: 100 bytes announced, 11 sent. */
const stalledRequest = (key: string) =>
  rawRequest(
    "POST",
    "/v1/pets",
    { Authorization: `Bearer ${key}`, "Content-Type": "application/json", "Content-Length": "100" },
    '{"name":"Sl',
  );

/** What came back on a stalled connection: a 408 with the contract's body and headers, the connection closed by the server. */
function expectTimedOut(answer: ReturnType<typeof parseResponse>, deadlineMs: number): void {
  expect(answer.status).toBe(408);
  expect(JSON.parse(answer.body)).toEqual({
    code: "request_timeout",
    message: `The request body did not arrive in full within ${deadlineMs / 1000} s`,
    status: 408,
  });
  // The contract's headers, as on every answer.
  expect(answer.headers).toMatchObject({
    "x-ratelimit-limit": "100000",
    "content-type": "application/json",
    "cache-control": "no-store",
    connection: "close",
  });
  expect(answer.headers["x-request-id"]).toMatch(/.+/);
}

const range = (values: number[]) => `${Math.round(Math.min(...values))}..${Math.round(Math.max(...values))} ms`;

/**
 * A connection that sent its headers and never its whole body was once held for ever
 * (20 of 20 still open after 120 s): a door to running out of file descriptors.
 */
async function stalledBodiesAreAnswered(server: Server, key: string, closes: boolean): Promise<void> {
  const port = Number(new URL(server.url).port);
  const head = stalledRequest(key);
  const began = performance.now();
  // Waited for until the server closes the connection; where it does not, a little past the deadline.
  const stalled = Array.from({ length: 200 }, () =>
    rawExchange(port, head, { after: "wait", deadlineMs: DEADLINE_MS + (closes ? 20_000 : 3_000) }),
  );
  // Meanwhile the others are served as ever.
  const api = client(server.url, key);
  const others = [];
  for (let i = 0; i < 20; i++) others.push((await api("/v1/pets?limit=1")).status);
  expect(others).toEqual(Array(20).fill(200));
  const exchanges = await Promise.all(stalled);
  const ms = Math.round(performance.now() - began);
  const answers = exchanges.map((exchange) => ({ closedBy: exchange.closedBy, ...parseResponse(exchange.received) }));
  console.info(
    `200 connections with an unfinished body, deadline ${DEADLINE_MS} ms: ${answers.filter((a) => a.status === 408).length} answered 408 and ${answers.filter((a) => a.closedBy === "server").length} closed by the server within ${ms} ms`,
  );
  for (const answer of answers) {
    expect(answer.closedBy).toBe(closes ? "server" : "deadline");
    expectTimedOut(answer, DEADLINE_MS);
  }
  expect(ms).toBeLessThan(DEADLINE_MS + 10_000);
}

describe("a body that never arrives in full", () => {
  it("is answered 408 request_timeout with the contract's headers after PETSTORE_BODY_TIMEOUT_MS, and its connection closed, on 200 connections while others are served (the binary)", async () => {
    const db = tempDatabaseUrl();
    const { key } = await createKey(db, ENTERPRISE);
    const server = await startServer(binaryServe(db), {
      env: { ...process.env, PETSTORE_BODY_TIMEOUT_MS: String(DEADLINE_MS) },
    });
    await stalledBodiesAreAnswered(server, key, true);
    expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });
  }, 60_000);

  // Deno.serve sends the answer but keeps reading the body Content-Length announced: a handler
  // cannot close the connection there (pinned: this fails once Deno closes it).
  it("is answered the same under Deno, which keeps the connection open until the client closes it", async () => {
    const db = tempDatabaseUrl("deno.db");
    const { key } = await createKey(db, ENTERPRISE);
    const script = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> })
      .scripts["start:deno"]!;
    const [, ...args] = script.split(" ");
    const server = await onFreePort((port) =>
      startServer(
        [
          join(ROOT, "node_modules/.bin/deno"),
          ...args
            .filter((arg) => arg !== "--dev")
            .map((arg) => (arg === "--allow-net=127.0.0.1:8080" ? `--allow-net=127.0.0.1:${port}` : arg)),
          "--host",
          "127.0.0.1",
          "--port",
          String(port),
          "--db",
          db,
        ],
        { cwd: ROOT, env: { ...process.env, NO_COLOR: "1", PETSTORE_BODY_TIMEOUT_MS: String(DEADLINE_MS) } },
      ),
    );
    await stalledBodiesAreAnswered(server, key, false);
    expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });
  }, 90_000);
});

describe("the default body deadline on the binary (30 s), 200 stalled bodies and 20 uploads at 4 B/s at once", () => {
  type Answer = Awaited<ReturnType<typeof rawExchange>> & ReturnType<typeof parseResponse>;
  let timedOut: Answer[];
  let created: Answer[];
  /** Another client's answers, twice a second until every stalled and slow request was answered. */
  const others: number[] = [];
  let server: Server;

  beforeAll(async () => {
    const db = tempDatabaseUrl("default-deadline.db");
    const { key } = await createKey(db, ENTERPRISE);
    server = await startServer(binaryServe(db));
    const port = Number(new URL(server.url).port);
    // 70 bytes each: 18 drips of 4 bytes, one a second.
    const bodies = Array.from({ length: 20 }, (_, i) =>
      Buffer.from(
        JSON.stringify({
          name: `Slow upload ${String(i).padStart(2, "0")} coming in at four bytes a sec`,
          categoryId: 1,
        }),
      ),
    );
    expect(bodies.every((body) => body.length === 70)).toBe(true);
    const slowHead = (body: Buffer) =>
      rawRequest("POST", "/v1/pets", {
        Authorization: `Bearer ${key}`,
        "Content-Type": "application/json",
        "Content-Length": String(body.length),
        Connection: "close",
      });
    const stalled = Array.from({ length: 200 }, () =>
      rawExchange(port, stalledRequest(key), { after: "wait", deadlineMs: 60_000 }),
    );
    const slow = bodies.map((body) =>
      rawTrickle(port, slowHead(body), body, { bytesPerSecond: 4, deadlineMs: 60_000 }),
    );
    let settled = false;
    const all = Promise.all([Promise.all(stalled), Promise.all(slow)]).finally(() => (settled = true));
    const api = client(server.url, key);
    while (!settled) {
      others.push((await api("/v1/pets?limit=1")).status);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const [stalledExchanges, slowExchanges] = await all;
    timedOut = stalledExchanges.map((exchange) => ({ ...exchange, ...parseResponse(exchange.received) }));
    created = slowExchanges.map((exchange) => ({ ...exchange, ...parseResponse(exchange.received) }));
    console.info(
      `200 stalled bodies: ${timedOut.filter((a) => a.status === 408).length} answered 408 and ${timedOut.filter((a) => a.closedBy === "server").length} closed by the server, at ${range(timedOut.map((a) => a.ms))}; 20 uploads at 4 B/s: ${created.filter((a) => a.status === 201).length} answered 201 at ${range(created.map((a) => a.ms))}; ${others.length} other requests meanwhile: ${others.filter((status) => status === 200).length} answered 200`,
    );
  }, 90_000);

  it("answers every stalled body 408 with the contract's headers and closes its connection", () => {
    for (const answer of timedOut) {
      expect(answer.closedBy).toBe("server");
      expectTimedOut(answer, 30_000);
    }
  });

  it("answers them at 30 s, not before", () => {
    expect(Math.min(...timedOut.map((a) => a.ms))).toBeGreaterThanOrEqual(29_900);
    expect(Math.max(...timedOut.map((a) => a.ms))).toBeLessThan(35_000);
  });

  it("gives each slow upload that keeps arriving its 201 when it ends, at about 18 s", () => {
    expect(created.map((answer) => answer.status)).toEqual(Array(20).fill(201));
    expect(Math.min(...created.map((a) => a.ms))).toBeGreaterThanOrEqual(17_000);
  });

  it("serves other clients meanwhile", () => {
    expect(others.length).toBeGreaterThan(50);
    expect(others).toEqual(Array(others.length).fill(200));
  });

  it("stops on SIGTERM afterwards", async () => {
    expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });
  });
});
