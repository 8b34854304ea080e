import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinary } from "./_binary.js";
import { binaryServe, cleanUp, createKey, type Server, startServer, tempDatabaseUrl } from "./_processes.js";
import { parseResponse, rawExchange } from "./_raw-http.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

let server: Server;
let port: number;
let key: string;

beforeAll(async () => {
  const db = tempDatabaseUrl("http10.db");
  ({ key } = await createKey(db));
  server = await startServer(binaryServe(db));
  port = Number(new URL(server.url).port);
}, 60_000);

/** One HTTP/1.0 request without a Host header, as the bytes a bare client sends. */
async function withoutHost(target: string, headers: string[] = []) {
  const exchange = await rawExchange(
    port,
    `GET ${target} HTTP/1.0\r\n${headers.map((line) => `${line}\r\n`).join("")}\r\n`,
    { after: "wait", deadlineMs: 5_000 },
  );
  return parseResponse(exchange.received);
}

/** Bun handed such a request over with the bare target as its URL, read as path /pets. */
describe("an HTTP/1.0 request without Host", () => {
  it("reaches the API with the contract's headers, rate limits included", async () => {
    const anonymous = await withoutHost("/v1/pets");
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers["x-ratelimit-limit"]).toBeDefined();
    expect(anonymous.headers["ratelimit-policy"]).toBeDefined();
    expect(anonymous.headers["x-request-id"]).toBeDefined();

    const listed = await withoutHost("/v1/pets?limit=1", [`Authorization: Bearer ${key}`]);
    expect(listed.status).toBe(200);
    expect(listed.headers["x-ratelimit-remaining"]).toBeDefined();
  }, 30_000);

  it("reaches the server's own paths", async () => {
    expect((await withoutHost("/healthz")).status).toBe(200);
    const missing = await withoutHost("/nowhere");
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ message: "No resource at /nowhere" });
  }, 30_000);
});
