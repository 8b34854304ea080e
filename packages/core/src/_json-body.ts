import { type Deadlines, deadlines, type Waiting } from "./_deadlines.js";
import { ApiError, RequestAbortedError } from "./errors.js";

// Reading a JSON request body as the API does it everywhere: JSON only, at most 16 KiB, within
// the body deadline, valid UTF-8 JSON; each failure its own answer (415, 413, 408, 400).

/** Largest request body accepted (a NewPet, an admin change). */
export const MAX_BODY_BYTES = 16 * 1024;

// application/json, or any type with the +json structured syntax suffix (RFC 6839).
const JSON_MEDIA_TYPE = /^\s*(application\/json|[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+\+json)\s*(;.*)?$/i;
/** A media type's charset parameter, quoted or not (RFC 9110 section 8.3.1). */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;
/** A body read's wait: the request, how to answer it, and its deadline in seconds for the message. */
interface BodyWait extends Waiting {
  request: Request;
  reject: (error: unknown) => void;
  seconds: number;
}

/** The body reads' deadlines, one watch per length (a server has one or two: the API's and the admin API's). */
const watches = new Map<number, Deadlines>();

/** `request_timeout`, and the read stopped: the stream is locked to the reader, which the cancel may or may not reach. */
function expire(waiting: Waiting): void {
  const { request, reject, seconds } = waiting as BodyWait;
  reject(
    new ApiError("request_timeout", `The request body did not arrive in full within ${seconds} s`, undefined, {
      Connection: "close",
    }),
  );
  request.body?.cancel().catch(() => {});
}

/**
 * The body, refused past `MAX_BODY_BYTES`: at once when `Content-Length` says so, while
 * streaming when no length is declared, and after reading a declared length (which bounds
 * what an HTTP server reads); and refused with `request_timeout` when it has not arrived in
 * full within `timeoutMs`: a client that sent its headers and never its whole body would
 * otherwise hold the request, and its connection, for ever (the answer closes the connection:
 * the rest of the body may still be on its way).
 *
 * One promise, no async function or chained steps around the read, and one timer for every
 * read's deadline (`deadlines`) instead of a timer each: in process under Bun, the timer,
 * the promise around the read and its two chained steps took about 5% of a create's CPU.
 */
function readBody(request: Request, timeoutMs: number): Promise<Uint8Array> {
  // Read before the handler: a bug of the host's pipeline, not the client's doing.
  if (request.bodyUsed) throw new TypeError("The request body was read before its handler");
  const declared = request.headers.get("content-length");
  if (Number(declared ?? 0) > MAX_BODY_BYTES) throw tooLarge();
  // A declared length frames the body on the wire, so the server reads no more than that:
  // read it whole, much cheaper than a stream (`request.body` alone makes one).
  const reading = declared !== null ? readWhole(request) : readStream(request);
  let watch = watches.get(timeoutMs);
  if (!watch) watches.set(timeoutMs, (watch = deadlines(timeoutMs)));
  const body = watch;
  return new Promise((resolve, reject) => {
    const waiting = body.start<BodyWait>({ at: 0, expire, request, reject, seconds: Math.round(timeoutMs / 100) / 10 });
    reading.then(
      (bytes) => {
        body.end(waiting);
        // Again for a Request made in process, whose Content-Length need not tell the truth.
        if (bytes.byteLength > MAX_BODY_BYTES) reject(tooLarge());
        else resolve(bytes);
      },
      (error: unknown) => {
        body.end(waiting);
        // Past the checks, reading fails only when the sender does: the client closed the
        // connection or stalled until the idle timeout (Bun rejects with an AbortError and
        // aborts the request's signal, Deno with BadResource). Not a server error.
        reject(error instanceof ApiError ? error : new RequestAbortedError({ cause: error }));
      },
    );
  });
}

const tooLarge = () => new ApiError("payload_too_large", `The request body must be at most ${MAX_BODY_BYTES} bytes`);

/**
 * Whether `bytes()` reads this request's body: defined by the same class as `arrayBuffer()`.
 * A Request look-alike may override the readers it knows and inherit a `bytes()` that cannot
 * read its body (@hono/node-server's lightweight Request does, for node:http).
 */
function hasOwnBytes(request: Request): boolean {
  const proto: unknown = Object.getPrototypeOf(request);
  return (
    typeof proto === "object" && proto !== null && Object.hasOwn(proto, "bytes") && Object.hasOwn(proto, "arrayBuffer")
  );
}

/** The whole body; `bytes()` hands over the bytes without an ArrayBuffer to wrap. */
function readWhole(request: Request): Promise<Uint8Array> {
  return hasOwnBytes(request) ? request.bytes() : request.arrayBuffer().then((buffer) => new Uint8Array(buffer));
}

/** A body without a declared length, refused as soon as it outgrows the limit. */
async function readStream(request: Request): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/** Throws on malformed UTF-8; reusable, since `decode` without `stream` starts afresh each call. */
const utf8 = new TextDecoder("utf-8", { fatal: true });

function parseJson(bytes: Uint8Array): unknown {
  let text: string;
  let value: unknown;
  try {
    text = utf8.decode(bytes);
    value = JSON.parse(text);
  } catch {
    throw new ApiError("invalid_body", "The request body is not valid JSON", [
      { path: "", message: "must be valid UTF-8 JSON" },
    ]);
  }
  // JSON.parse keeps the last of a repeated member: the request would mean what its sender
  // may not have meant, so it is refused, as a strict reader (RFC 8259 section 4) would.
  const repeated = typeof value === "object" && value !== null ? repeatedMember(text) : undefined;
  if (repeated !== undefined) {
    throw new ApiError("invalid_body", `The request body names the member '${repeated}' twice`, [
      { path: repeated, message: "is given more than once" },
    ]);
  }
  return value;
}

/** JSON's white space (RFC 8259 section 2): space, tab, line feed, carriage return. */
const JSON_SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * The dot path of the first member an object of `text` (valid JSON) names twice, or
 * undefined. Names compare as JSON.parse reads them: `"a"` and `"\u0061"` are one name.
 */
export function repeatedMember(text: string): string | undefined {
  // One frame per open object or array: the names an object has seen, the path to it.
  const frames: { names: Set<string> | undefined; path: string; index: number }[] = [];
  let key: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = i + 1;
      while (text.charCodeAt(end) !== 0x22) end += text.charCodeAt(end) === 0x5c /* \ */ ? 2 : 1;
      const frame = frames.at(-1);
      // A string is a member's name when it stands where one does: in an object, before a colon.
      let next = end + 1;
      while (JSON_SPACE.has(text.charCodeAt(next))) next++;
      if (frame?.names && text.charCodeAt(next) === 0x3a /* : */) {
        const raw = text.slice(i + 1, end);
        const name = raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw;
        const path = frame.path === "" ? name : `${frame.path}.${name}`;
        if (frame.names.has(name)) return path;
        frame.names.add(name);
        key = path;
      }
      i = end;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const parent = frames.at(-1);
      const path =
        parent === undefined ? "" : parent.names ? (key ?? "") : `${parent.path}.${parent.index}`.replace(/^\./, "");
      frames.push({ names: c === 0x7b ? new Set() : undefined, path, index: 0 });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      frames.pop();
    } else if (c === 0x2c /* , */) {
      const frame = frames.at(-1);
      if (frame && !frame.names) frame.index++;
    }
  }
  return undefined;
}

/**
 * The request's JSON body: `415` unless its `Content-Type` is JSON (`application/json` or
 * `+json`) in UTF-8 (no other charset), `413` past 16 KiB, `408` when it does not arrive within
 * `timeoutMs`, `400` when it is not valid UTF-8 JSON or an object in it names a member twice.
 */
export async function readJsonBody(request: Request, timeoutMs: number): Promise<unknown> {
  const contentType = request.headers.get("content-type");
  if (contentType === null || !JSON_MEDIA_TYPE.test(contentType)) {
    throw new ApiError("unsupported_media_type", "The request body must be JSON (Content-Type: application/json)");
  }
  // JSON is UTF-8 (RFC 8259 section 8.1): a body sent in another charset would be misread.
  const charset = CHARSET.exec(contentType)?.[1];
  if (charset !== undefined && charset.toLowerCase() !== "utf-8") {
    throw new ApiError(
      "unsupported_media_type",
      `The request body must be UTF-8 JSON, not charset=${charset} (Content-Type: application/json, or with charset=utf-8)`,
    );
  }
  return parseJson(await readBody(request, timeoutMs));
}
