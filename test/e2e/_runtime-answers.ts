import { expect } from "vitest";
import { parseResponse, rawExchange, rawRequest } from "./_raw-http.js";

/**
 * Requests the runtime's HTTP parser refuses before the server sees them, and what each runtime
 * answers, as docs/http-contract.md ("Answers the runtime makes itself") lists them: a status
 * with an empty body and these headers only, then the connection closed; `closed`: the
 * connection closed without an answer; `api`: the runtime passes the request on, and the API
 * answers it with its contract.
 */
export type RuntimeAnswer = { status: number } | "closed" | "api";

/** The headers a runtime's own answer carries, and nothing else: names, lower case. */
const RUNTIME_HEADERS = { bun: ["connection"], deno: ["connection", "content-length", "date"] };

const head = (lines: string[]) => Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1");
// Connection: close, so that a request the runtime passes on ends its connection once answered.
const get = (...headers: string[]) =>
  head(["GET /v1/pets HTTP/1.1", "Host: 127.0.0.1", "Connection: close", ...headers]);

export const RUNTIME_ANSWERS: { what: string; request: Buffer; bun: RuntimeAnswer; deno: RuntimeAnswer }[] = [
  { what: "a NUL byte in a header value", request: get("X-Note: a\0b"), bun: { status: 400 }, deno: { status: 400 } },
  {
    what: "a control character in a header value",
    request: get("X-Note: a\u0001b"),
    bun: { status: 400 },
    deno: { status: 400 },
  },
  { what: "a header line without a colon", request: get("X-Note"), bun: { status: 400 }, deno: { status: 400 } },
  {
    what: "a folded header line (obs-fold)",
    request: get("X-Note: a", " b"),
    bun: { status: 400 },
    deno: { status: 400 },
  },
  {
    what: "a request line that is no request line",
    request: head(["GARBAGE"]),
    bun: { status: 400 },
    deno: { status: 400 },
  },
  {
    what: "a 70 KB header",
    request: get(`X-Note: ${"a".repeat(70 * 1024)}`),
    bun: { status: 431 },
    deno: { status: 400 },
  },
  {
    what: "a 20 KB header (past Bun's 16 KiB head, within Deno's 64 KiB)",
    request: get(`X-Note: ${"a".repeat(20 * 1024)}`),
    bun: { status: 431 },
    deno: "api",
  },
  {
    what: "250 header fields",
    request: get(...Array.from({ length: 250 }, (_, i) => `X-Note-${i}: a`)),
    bun: { status: 431 },
    deno: { status: 400 },
  },
  {
    what: "an HTTP version other than 1.0 and 1.1",
    request: head(["GET /v1/pets HTTP/9.9", "Host: 127.0.0.1"]),
    bun: { status: 505 },
    deno: { status: 400 },
  },
  {
    what: "a Content-Length that is no number",
    request: head(["POST /v1/pets HTTP/1.1", "Host: 127.0.0.1", "Content-Length: ten"]),
    bun: { status: 400 },
    deno: { status: 400 },
  },
  {
    what: "both Content-Length and Transfer-Encoding",
    request: Buffer.concat([
      head(["POST /v1/pets HTTP/1.1", "Host: 127.0.0.1", "Content-Length: 5", "Transfer-Encoding: chunked"]),
      Buffer.from("0\r\n\r\n"),
    ]),
    bun: { status: 400 },
    deno: { status: 400 },
  },
  {
    what: "a chunk size that is no hexadecimal number",
    request: Buffer.concat([
      head(["POST /v1/pets HTTP/1.1", "Host: 127.0.0.1", "Transfer-Encoding: chunked"]),
      Buffer.from("zz\r\n{}\r\n0\r\n\r\n"),
    ]),
    bun: { status: 400 },
    deno: "closed",
  },
  {
    what: "HTTP/1.1 without Host",
    request: head(["GET /v1/pets HTTP/1.1", "Connection: close"]),
    bun: { status: 400 },
    deno: "api",
  },
  {
    what: "OPTIONS *",
    request: head(["OPTIONS * HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]),
    bun: { status: 400 },
    deno: "api",
  },
];

/** Sends `request` on a new connection to `port` and checks the runtime answers as `expected`. */
export async function expectRuntimeAnswer(
  port: number,
  runtime: "bun" | "deno",
  request: Buffer,
  expected: RuntimeAnswer,
): Promise<void> {
  const exchange = await rawExchange(port, request, { after: "wait", deadlineMs: 5_000 });
  if (expected === "closed") {
    expect([exchange.received, exchange.closedBy]).toEqual(["", "server"]);
    return;
  }
  const answer = parseResponse(exchange.received);
  if (expected === "api") {
    // The API's answer: its Error body and headers (401 or 404 here, without a key).
    expect(answer.headers["x-request-id"]).toBeDefined();
    expect(answer.headers["content-type"]).toBe("application/json");
    return;
  }
  expect(exchange.closedBy).toBe("server");
  expect({ status: answer.status, headers: Object.keys(answer.headers).sort(), body: answer.body }).toEqual({
    status: expected.status,
    headers: RUNTIME_HEADERS[runtime],
    body: "",
  });
}

/**
 * A create declaring a 200 MiB body (past Bun's default limit of 128 MiB, which Bun answered
 * with a bare 413 of its own), of which only the head is sent: the API's 413, with its Error
 * body and headers, answered without reading the body.
 */
export async function expectApi413(port: number, key: string): Promise<void> {
  const request = rawRequest("POST", "/v1/pets", {
    Authorization: `Bearer ${key}`,
    "Content-Type": "application/json",
    "Content-Length": String(200 * 1024 * 1024),
    "X-Request-Id": "declared-200-mib",
  });
  // The server may keep the connection for the body it was promised: the answer is read by then.
  const exchange = await rawExchange(port, request, { after: "wait", deadlineMs: 2_000 });
  const answer = parseResponse(exchange.received);
  expect(answer.status).toBe(413);
  expect(JSON.parse(answer.body)).toEqual({
    code: "payload_too_large",
    message: "The request body must be at most 16384 bytes",
    status: 413,
  });
  expect(answer.headers).toMatchObject({
    "x-request-id": "declared-200-mib",
    "content-type": "application/json",
    "cache-control": "no-store",
    "x-ratelimit-remaining": expect.any(String),
  });
}
