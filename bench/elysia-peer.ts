/**
 * A peer to beat: the same API built by hand the way a team would without this project, on
 * Elysia (the fastest framework a Bun team would pick). The work besides routing (key map,
 * fixed-window counter, valibot, the product's full header set) is bench/_peer.ts, shared
 * with the Hono peer; the body is validated by Elysia through valibot's Standard Schema, as
 * Elysia's documentation shows. No access log, unless BENCH_ACCESS_LOG=1: then one JSON line
 * per answer on stdout with the fields the product logs (time, requestId, method, path, status,
 * durationMs, keyId), written as the product writes its own, once per turn of the event loop
 * through Bun's stdout writer, from Elysia's `onAfterResponse` hook, the place its
 * documentation gives for logging. Its counters and pets are in memory, or with
 * BENCH_DB=PATH in a SQLite file through `bun:sqlite` (bench/_peer-sqlite.ts; BENCH_SYNCHRONOUS
 * FULL, the default, or NORMAL): the file database a Bun team would hand-build.
 * Run by bench/run.ts: `bun bench/elysia-peer.ts` with BENCH_PORT and BENCH_KEY set.
 */
import { Database } from "bun:sqlite";
import { Elysia } from "elysia";
import * as v from "valibot";
import { admit, insertPet, JSON_TYPE, Limit, NewPet, petPage, storeIn } from "./_peer.js";
import { sqliteStorage, synchronousFromEnv } from "./_peer-sqlite.js";

if (process.env.BENCH_DB)
  storeIn(sqliteStorage(new Database(process.env.BENCH_DB), synchronousFromEnv(process.env.BENCH_SYNCHRONOUS)));

/** When the access log is on: when each request began and its key's id, for its line. */
const accessLog = process.env.BENCH_ACCESS_LOG === "1" ? accessLogWriter() : undefined;

function accessLogWriter() {
  const writer = Bun.stdout.writer();
  const began = new WeakMap<Request, { at: number; keyId?: string }>();
  let pending = "";
  const flush = () => {
    writer.write(pending);
    void writer.flush();
    pending = "";
  };
  let ms = 0;
  let iso = "";
  return {
    began,
    write(request: Request, status: number, requestId: string | undefined) {
      const now = Date.now();
      if (now !== ms) [ms, iso] = [now, new Date(now).toISOString()];
      const start = began.get(request);
      const line: Record<string, string | number> = {
        time: iso,
        requestId: requestId ?? "",
        method: request.method,
        path: new URL(request.url).pathname,
        status,
        durationMs: start === undefined ? 0 : Math.round((performance.now() - start.at) * 100) / 100,
      };
      if (start?.keyId !== undefined) line.keyId = start.keyId;
      if (pending === "") setImmediate(flush);
      pending += `${JSON.stringify(line)}\n`;
    },
  };
}

const json = (body: unknown, status: number, headers: Record<string, string>) =>
  new Response(JSON.stringify(body), { status, headers: { ...headers, "Content-Type": "application/json" } });

/** An issue as the product's `{ path, message }`: a Standard Schema path is keys or `{ key }` objects. */
const dotted = (issue: { path?: unknown; message?: string }) => ({
  path: Array.isArray(issue.path)
    ? issue.path
        .map((part) => (typeof part === "object" && part !== null && "key" in part ? String(part.key) : String(part)))
        .join(".")
    : String(issue.path ?? ""),
  message: issue.message ?? "",
});

/** A refusal answered from `onRequest`, which Elysia's `onAfterResponse` does not see: logged here. */
const refused = (request: Request, response: Response) => {
  accessLog?.write(request, response.status, response.headers.get("x-request-id") ?? undefined);
  return response;
};

const app = new Elysia({ prefix: "/v1" })
  // Before routing and body parsing, as the product checks the key and the limit first.
  .onRequest(({ request, set }) => {
    const at = performance.now();
    const admission = admit(request.headers.get("x-request-id"), request.headers.get("authorization"), Date.now());
    accessLog?.began.set(request, { at, ...(admission.status === 200 && { keyId: admission.keyId }) });
    if (admission.status !== 200) return refused(request, json(admission.body, admission.status, admission.headers));
    // The only body this API takes is createPet's JSON: refused before Elysia would parse a form or text.
    if (request.method === "POST" && !JSON_TYPE.test(request.headers.get("content-type") ?? "")) {
      return refused(
        request,
        json({ code: "unsupported_media_type", message: "Send application/json", status: 415 }, 415, admission.headers),
      );
    }
    Object.assign(set.headers, admission.headers);
  })
  .onError(({ code, error, set }) => {
    if (code === "VALIDATION") {
      set.status = 400;
      return {
        code: "invalid_body",
        message: "The request body is invalid",
        status: 400,
        details: error.all.map(dotted),
      };
    }
    if (code === "PARSE") {
      set.status = 400;
      return { code: "invalid_body", message: "The request body is not valid JSON", status: 400 };
    }
  })
  .onAfterResponse(({ request, set, responseValue }) => {
    if (!accessLog) return;
    if (responseValue instanceof Response)
      accessLog.write(request, responseValue.status, responseValue.headers.get("x-request-id") ?? undefined);
    else
      accessLog.write(
        request,
        typeof set.status === "number" ? set.status : 200,
        (set.headers as Record<string, string>)["X-Request-Id"],
      );
  })
  .get("/pets", ({ query, set }) => {
    const limit = v.safeParse(Limit, query.limit ?? "20");
    if (!limit.success) {
      set.status = 400;
      return { code: "invalid_parameter", message: "limit must be an integer from 1 to 100", status: 400 };
    }
    const { page, next } = petPage(limit.output, query.cursor);
    if (next !== undefined) set.headers.link = next;
    return page;
  })
  .post(
    "/pets",
    ({ body, set }) => {
      const pet = insertPet(body);
      set.status = 201;
      set.headers.location = `/v1/pets/${pet.id}`;
      return pet;
    },
    { body: NewPet },
  );

app.listen({ hostname: "127.0.0.1", port: Number(process.env.BENCH_PORT ?? 0), development: false });
console.log(JSON.stringify({ event: "listening", port: app.server?.port }));
