import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinary } from "./_binary.js";
import { binaryServe, cleanUp, createKey, type Server, startServer, tempDir } from "./_processes.js";
import { parseResponse, rawExchange, rawRequest } from "./_raw-http.js";

/**
 * The edges of HTTP against the compiled binary, over raw loopback sockets: requests a
 * well-behaved client library never sends (half a body, several requests in one write).
 */

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

let server: Server;
let port: number;
let key: string;

beforeAll(async () => {
  const db = `file:${join(tempDir(), "edges.db")}`;
  ({ key } = await createKey(db));
  server = await startServer(binaryServe(db));
  port = Number(new URL(server.url).port);
}, 60_000);

describe("HEAD over a real socket", () => {
  it.each(["/v1/pets?limit=5", "/v1/pets/999", "/v1/openapi.json", "/healthz"])("answers HEAD %s with the length GET sends and no body", async (path) => {
    const headers = { Authorization: `Bearer ${key}`, Connection: "close" };
    const head = await rawExchange(port, rawRequest("HEAD", path, headers), { after: "wait", deadlineMs: 5_000 });
    const get = await rawExchange(port, rawRequest("GET", path, headers), { after: "wait", deadlineMs: 5_000 });
    expect([head.closedBy, get.closedBy]).toEqual(["server", "server"]);
    const getAnswer = parseResponse(get.received);
    expect(getAnswer.body.length).toBeGreaterThan(0);
    const headAnswer = parseResponse(head.received);
    expect(headAnswer.status).toBe(getAnswer.status);
    // RFC 9110 section 9.3.2: the GET body's length (or none), never a made-up 0.
    expect(headAnswer.headers["content-length"]).toBe(String(Buffer.byteLength(getAnswer.body, "latin1")));
    expect(headAnswer.body).toBe("");
  });
});
