import { connect } from "node:net";

/** What came back on one raw connection. */
export interface RawExchange {
  /** Every byte the server sent, as latin1 text (one character per byte). */
  received: string;
  /** "server": it closed the connection; "client": `after` closed it; "deadline": nobody did in time. */
  closedBy: "server" | "client" | "deadline";
  /** Milliseconds from the write to the close. */
  ms: number;
}

export interface RawOptions {
  /**
   * What the client does once its bytes are written: "wait" keeps the connection open and
   * reads; "end" half-closes it (FIN, still reading); "destroy" closes it at once.
   */
  after: "wait" | "end" | "destroy";
  /** The connection is destroyed by then at the latest. */
  deadlineMs: number;
}

/**
 * Writes `data` on a new loopback connection to `port` in one write (so several requests in
 * it arrive together: pipelined), then behaves as `options.after` says. Bytes, not a
 * client library: the tests need requests no well-behaved client sends.
 */
export function rawExchange(port: number, data: string | Uint8Array, options: RawOptions): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let written = 0;
    let closedBy: RawExchange["closedBy"] = "server";
    const deadline = setTimeout(() => {
      closedBy = "deadline";
      socket.destroy();
    }, options.deadlineMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", (error) => {
      clearTimeout(deadline);
      reject(error);
    });
    socket.on("close", () => {
      clearTimeout(deadline);
      resolve({ received: Buffer.concat(chunks).toString("latin1"), closedBy, ms: Date.now() - written });
    });
    socket.write(data, () => {
      written = Date.now();
      if (options.after === "end") socket.end();
      if (options.after === "destroy") {
        closedBy = "client";
        socket.destroy();
      }
    });
  });
}

/**
 * Writes `head` on a new loopback connection to `port`, then `body` `bytesPerSecond` bytes a
 * second (a slow client that keeps sending), and reads until the server closes the connection
 * (send `Connection: close`) or `deadlineMs` passes: what came back, and when (ms from the
 * head's write).
 */
export function rawTrickle(
  port: number,
  head: string | Uint8Array,
  body: Uint8Array,
  options: { bytesPerSecond: number; deadlineMs: number },
): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let sent = 0;
    let closedBy: RawExchange["closedBy"] = "server";
    const began = performance.now();
    const drip = setInterval(() => {
      if (sent >= body.length) return clearInterval(drip);
      socket.write(body.subarray(sent, sent + options.bytesPerSecond));
      sent += options.bytesPerSecond;
    }, 1_000);
    const deadline = setTimeout(() => {
      closedBy = "deadline";
      socket.destroy();
    }, options.deadlineMs);
    const done = () => {
      clearInterval(drip);
      clearTimeout(deadline);
    };
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", (error) => {
      done();
      reject(error);
    });
    socket.on("close", () => {
      done();
      resolve({ received: Buffer.concat(chunks).toString("latin1"), closedBy, ms: performance.now() - began });
    });
    socket.write(head);
  });
}

/** One HTTP/1.1 request as bytes; `Content-Length` is computed unless `headers` sets it. */
export function rawRequest(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body: string | Uint8Array = "",
): Buffer {
  const bytes = typeof body === "string" ? Buffer.from(body) : Buffer.from(body);
  const all: Record<string, string> = { Host: "127.0.0.1", ...headers };
  if (bytes.length > 0 && !Object.keys(all).some((name) => name.toLowerCase() === "content-length"))
    all["Content-Length"] = String(bytes.length);
  const head = `${method} ${path} HTTP/1.1\r\n${Object.entries(all)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("")}\r\n`;
  return Buffer.concat([Buffer.from(head, "latin1"), bytes]);
}

/** The status, lower-cased headers and body of the first response in `text`. */
export function parseResponse(text: string): { status: number; headers: Record<string, string>; body: string } {
  const end = text.indexOf("\r\n\r\n");
  if (end === -1) throw new Error(`no complete response head in ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine!.split(" ")[1]), headers, body: text.slice(end + 4) };
}
