import * as v from "valibot";
import type { Context, Handler } from "../context.js";
import { ApiError, RequestAbortedError, StorageUnavailableError, UNAVAILABLE_RETRY_SECONDS } from "../errors.js";
import type { IdempotencyClaim } from "../ports.js";
import { type ErrorDetail, NewPetSchema, type Pet } from "../schemas.js";
import { sha256Hex } from "../_sha256.js";
import { json } from "./_respond.js";

/** Largest request body accepted by createPet. */
export const MAX_BODY_BYTES = 16 * 1024;

// application/json, or any type with the +json structured syntax suffix (RFC 6839).
const JSON_MEDIA_TYPE = /^\s*(application\/json|[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+\+json)\s*(;.*)?$/i;
// 1..255 printable ASCII characters (space to tilde) but the comma: fetch joins a repeated
// header's values with ", ", so two keys sent at once would otherwise pass as one key.
const IDEMPOTENCY_KEY = /^[\x20-\x2b\x2d-\x7e]{1,255}$/;
const NEW_PET_FIELDS = new Set(Object.keys(NewPetSchema.entries));

function invalidBody(message: string, details: ErrorDetail[]): ApiError {
  return new ApiError("invalid_body", message, details);
}

/**
 * The body, refused past `MAX_BODY_BYTES`: at once when `Content-Length` says so, while
 * streaming when no length is declared, and after reading a declared length (which bounds
 * what an HTTP server reads); and refused with `request_timeout` when it has not arrived in
 * full within `timeoutMs`.
 */
function readBody(request: Request, timeoutMs: number): Promise<Uint8Array> {
  // Read before the handler: a bug of the host's pipeline, not the client's doing.
  if (request.bodyUsed) throw new TypeError("The request body was read before createPet");
  const declared = request.headers.get("content-length");
  if (Number(declared ?? 0) > MAX_BODY_BYTES) throw tooLarge();
  // A declared length frames the body on the wire, so the server reads no more than that:
  // read it whole, much cheaper than a stream (`request.body` alone makes one). One promise,
  // no async function around it: this runs on every create.
  const reading = withinDeadline(declared !== null ? readWhole(request) : readStream(request), request, timeoutMs);
  return reading.catch((error: unknown) => {
    if (error instanceof ApiError) throw error;
    // Past that, reading fails only when the sender does: the client closed the connection
    // or stalled until the idle timeout (Bun rejects with an AbortError and aborts the
    // request's signal, Deno with BadResource). Not a server error.
    throw new RequestAbortedError({ cause: error });
  });
}

/**
 * `reading`, or `request_timeout` once `timeoutMs` passed: a client that sent its headers and
 * never its whole body would otherwise hold the request, and its connection, for ever. The
 * answer closes the connection (the rest of the body may still be on its way).
 */
function withinDeadline(reading: Promise<Uint8Array>, request: Request, timeoutMs: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      const seconds = Math.round(timeoutMs / 100) / 10;
      reject(new ApiError("request_timeout", `The request body did not arrive in full within ${seconds} s`, undefined, { Connection: "close" }));
      // Stop reading: the stream is locked to the reader, which the cancel may or may not reach.
      request.body?.cancel().catch(() => {});
    }, timeoutMs);
    reading.then(
      (body) => {
        clearTimeout(timer);
        resolve(body);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
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
  return typeof proto === "object" && proto !== null && Object.hasOwn(proto, "bytes") && Object.hasOwn(proto, "arrayBuffer");
}

/** The whole body; checked against the limit again for a Request made in process, whose header need not tell the truth. */
function readWhole(request: Request): Promise<Uint8Array> {
  // `bytes()` hands over the bytes without an ArrayBuffer to wrap.
  const bytes = hasOwnBytes(request) ? request.bytes() : request.arrayBuffer().then((buffer) => new Uint8Array(buffer));
  return bytes.then((body) => {
    if (body.byteLength > MAX_BODY_BYTES) throw tooLarge();
    return body;
  });
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
    throw invalidBody("The request body is not valid JSON", [{ path: "", message: "must be valid UTF-8 JSON" }]);
  }
}

/** The NewPet in a parsed body, or `invalid_body` listing every problem, phrased for a person. */
function readNewPet(body: unknown): v.InferOutput<typeof NewPetSchema> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidBody("The request body is not a valid NewPet", [{ path: "", message: "must be a JSON object" }]);
  }
  const result = v.safeParse(NewPetSchema, body);
  if (result.success) return result.output;
  const problems: ErrorDetail[] = [];
  for (const issue of result.issues) {
    const path = v.getDotPath(issue) ?? "";
    // Unknown keys are listed below, all of them (valibot stops at the first).
    if (issue.type === "strict_object" && issue.expected === "never") continue;
    const missing = issue.type === "strict_object" && issue.input === undefined;
    problems.push({ path, message: missing ? "is required" : issue.message });
  }
  for (const field of Object.keys(body)) {
    if (NEW_PET_FIELDS.has(field)) continue;
    const message = field === "id" ? "is assigned by the service and must not be sent" : "is not a field of NewPet";
    problems.push({ path: field, message });
  }
  throw invalidBody("The request body is not a valid NewPet", problems);
}

/** Key order and whitespace do not make two bodies different. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * A create's 503 says what the server cannot know: a database that did not answer in time may
 * still commit the insert afterwards (a hung server that goes on), so the pet may exist. The
 * same Idempotency-Key finds out: it replays the 201 if it does, creates the pet if not.
 */
function outcomeUnknown(error: unknown, keyed: boolean): unknown {
  if (!(error instanceof StorageUnavailableError)) return error;
  const retry = keyed ? "retry with the same Idempotency-Key" : "send an Idempotency-Key with every create, so that a retry cannot store a second pet";
  return new ApiError("service_unavailable", `Storage did not confirm the create; the pet may have been stored: ${retry}`, undefined, {
    "Retry-After": String(UNAVAILABLE_RETRY_SECONDS),
  });
}

function created(ctx: Context, pet: Pet, replayed: boolean): Response {
  const headers: Record<string, string> = { Location: `${ctx.basePath}/pets/${pet.id}` };
  if (replayed) headers["Idempotent-Replayed"] = "true";
  return json(ctx, pet, 201, headers);
}

async function createOnce(ctx: Context, claim: IdempotencyClaim, body: v.InferOutput<typeof NewPetSchema>) {
  const found = await ctx.idempotency.claim(claim);
  switch (found.state) {
    case "in_progress":
      throw new ApiError("idempotency_key_in_use", "A request with this Idempotency-Key is still being processed; retry later");
    case "mismatch":
      throw new ApiError("idempotency_key_reused", "This Idempotency-Key was already used with a different request body");
    case "completed": {
      const pet = await ctx.store.getPet(found.petId);
      if (!pet) throw new Error(`Idempotency record points at missing pet ${found.petId}`);
      return created(ctx, pet, true);
    }
    case "claimed":
      try {
        return created(ctx, await ctx.store.createPet(body, claim), false);
      } catch (error) {
        await ctx.idempotency.release(claim).catch(() => {});
        throw error;
      }
  }
}

/**
 * `POST /pets` (createPet): validates a NewPet and stores it; `201` only after the write
 * committed. With an `Idempotency-Key`, a retry replays the first answer instead of creating
 * a second pet.
 */
export const createPet: Handler = async (request, ctx) => {
  const idempotencyKey = request.headers.get("idempotency-key");
  if (idempotencyKey !== null && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
    const message = idempotencyKey.includes(",")
      ? "must be sent once, and a key holds no comma (a repeated header arrives joined by commas)"
      : "must be 1 to 255 printable ASCII characters other than the comma";
    throw new ApiError("invalid_parameter", `Header 'Idempotency-Key' ${message}`, [{ path: "Idempotency-Key", message }]);
  }
  const contentType = request.headers.get("content-type");
  if (contentType === null || !JSON_MEDIA_TYPE.test(contentType)) {
    throw new ApiError("unsupported_media_type", "The request body must be JSON (Content-Type: application/json)");
  }
  const body = parseJson(await readBody(request, ctx.bodyTimeoutMs));
  const pet = readNewPet(body);

  try {
    if (idempotencyKey === null) return created(ctx, await ctx.store.createPet(pet), false);
    const claim = { scope: ctx.caller?.id ?? "", key: idempotencyKey, fingerprint: await sha256Hex(canonicalJson(body)) };
    return await createOnce(ctx, claim, pet);
  } catch (error) {
    throw outcomeUnknown(error, idempotencyKey !== null);
  }
};
