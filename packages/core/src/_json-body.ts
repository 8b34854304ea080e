import { type Deadlines, deadlines, type Waiting } from "./_deadlines.js";
import { ApiError, RequestAbortedError } from "./errors.js";

// Reading a JSON request body as the API does it everywhere: JSON only, at most 16 KiB, within
// the body deadline, valid UTF-8 JSON; each failure its own answer (415, 413, 408, 400).

/** Largest request body accepted (a NewPet, an admin change). */
export const MAX_BODY_BYTES = 16 * 1024;

// application/json, or any type with the +json structured syntax suffix (RFC 6839).
const JSON_MEDIA_TYPE = /^\s*(application\/json|[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+\+json)\s*(;.*)?$/i;
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
  try {
    return JSON.parse(utf8.decode(bytes));
  } catch {
    throw new ApiError("invalid_body", "The request body is not valid JSON", [
      { path: "", message: "must be valid UTF-8 JSON" },
    ]);
  }
}

/**
 * The request's JSON body: `415` unless its `Content-Type` is JSON (`application/json` or
 * `+json`), `413` past 16 KiB, `408` when it does not arrive within `timeoutMs`, `400` when it
 * is not valid UTF-8 JSON.
 */
export async function readJsonBody(request: Request, timeoutMs: number): Promise<unknown> {
  const contentType = request.headers.get("content-type");
  if (contentType === null || !JSON_MEDIA_TYPE.test(contentType)) {
    throw new ApiError("unsupported_media_type", "The request body must be JSON (Content-Type: application/json)");
  }
  return parseJson(await readBody(request, timeoutMs));
}
