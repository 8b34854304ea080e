import { memoryAdapters } from "@petstore/adapters/memory";
import { issueApiKey, StorageUnavailableError } from "@petstore/core";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { health } from "./health.js";
import { serverFetch } from "./server-fetch.js";

async function setup(check: () => Promise<void> = async () => {}, clock = { now: 1_000_000 }) {
  const adapters = memoryAdapters();
  const lines: Record<string, unknown>[] = [];
  const { fetch } = serverFetch({
    api: adapters,
    basePath: "/v1",
    health: health(check, () => clock.now),
    log: (line) => lines.push(JSON.parse(line)),
  });
  const { key, record } = await issueApiKey(adapters.keys, { plan: "free" });
  const call = (path: string, init: RequestInit = {}, client: string | undefined = "127.0.0.1") =>
    fetch(new Request(`http://petstore.test${path}`, init), () => client);
  return { adapters, call, lines, key, keyId: record.id };
}

afterEach(() => vi.useRealTimers());

describe("the server's request path", () => {
  it("logs a key put into a path by mistake as redacted, never verbatim", async () => {
    const { call, key, lines } = await setup();
    await call(`/v1/pets/${key}`, { headers: { authorization: `Bearer ${key}` } });
    await call(`/nowhere/${key}`);
    expect(lines.map((line) => line.path)).toEqual(["/v1/pets/psk_[redacted]", "/nowhere/psk_[redacted]"]);
    expect(JSON.stringify(lines)).not.toContain(key);
  });

  it("logs an unexpected error by default as one line with its time, message, code and cause", async () => {
    const adapters = memoryAdapters();
    const failure = Object.assign(
      new Error("SQLITE_CORRUPT: database disk image is malformed", { cause: new Error("page 7") }),
      { code: "SQLITE_CORRUPT" },
    );
    adapters.store.listPets = () => Promise.reject(failure);
    const { fetch } = serverFetch({
      api: adapters,
      basePath: "/v1",
      health: health(
        async () => {},
        () => 0,
      ),
      log: () => {},
    });
    const { key } = await issueApiKey(adapters.keys, { plan: "free" });
    const stderr = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const response = await fetch(
        new Request("http://petstore.test/v1/pets", { headers: { authorization: `Bearer ${key}` } }),
        () => undefined,
      );
      expect(response.status).toBe(500);
      expect(stderr).toHaveBeenCalledTimes(1);
      const line = JSON.parse(stderr.mock.calls[0]![0] as string);
      expect(line).toMatchObject({
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        level: "error",
        requestId: response.headers.get("x-request-id"),
        message: "SQLITE_CORRUPT: database disk image is malformed",
        code: "SQLITE_CORRUPT",
        cause: { message: "page 7" },
      });
    } finally {
      stderr.mockRestore();
    }
  });

  it("answers GET /healthz with 200 and no key when storage answers", async () => {
    const { call } = await setup();
    const response = await call("/healthz");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("x-request-id")).toBeTruthy();
    const head = await call("/healthz", { method: "HEAD" });
    expect(head.status).toBe(200);
    const get = await call("/healthz");
    expect(head.headers.get("content-length")).toBe(String((await get.arrayBuffer()).byteLength));
    expect(await head.text()).toBe("");
  });

  it("gives paths outside the API the API's edge: the same request-id rule and standard headers", async () => {
    const { call } = await setup();
    for (const path of ["/healthz", "/docs", "/nowhere", "/v1/pets"]) {
      const echoed = await call(path, { headers: { "x-request-id": "trace-7" } });
      expect(echoed.headers.get("x-request-id"), path).toBe("trace-7");
      expect([echoed.headers.get("cache-control"), echoed.headers.get("x-content-type-options")], path).toEqual([
        "no-store",
        "nosniff",
      ]);
      const tooLong = await call(path, { headers: { "x-request-id": "x".repeat(129) } });
      expect(tooLong.headers.get("x-request-id"), path).toMatch(/^[0-9a-f-]{36}$/);
    }
    const missing = await call("/nowhere", { method: "POST" });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ code: "not_found", message: "No resource at /nowhere", status: 404 });
    const wrongMethod = await call("/healthz", { method: "DELETE" });
    expect([wrongMethod.status, wrongMethod.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
  });

  it("answers /healthz with 503 and the reason when the storage check fails", async () => {
    const { call } = await setup(async () => {
      throw new StorageUnavailableError("the database is read-only");
    });
    const response = await call("/healthz");
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: "unavailable", reason: "the database is read-only" });
    expect(response.headers.get("retry-after")).toBe("1");
    expect(response.headers.get("cache-control")).toBe("no-store");
  });

  describe("after a request met a storage failure, though the check passes", () => {
    const clock = { now: 1_000_000 };
    let world: Awaited<ReturnType<typeof setup>>;
    let failing: boolean;
    const list = () => world.call("/v1/pets", { headers: { authorization: `Bearer ${world.key}` } });
    const create = () =>
      world.call("/v1/pets", {
        method: "POST",
        headers: { authorization: `Bearer ${world.key}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "Rex", categoryId: 1 }),
      });
    beforeEach(async () => {
      world = await setup(async () => {}, clock);
      failing = true;
      const { listPets, createPet } = world.adapters.store;
      world.adapters.store.listPets = (...args) =>
        failing ? Promise.reject(new StorageUnavailableError("the disk is full")) : listPets(...args);
      world.adapters.store.createPet = (...args) =>
        failing ? Promise.reject(new StorageUnavailableError("the disk is full")) : createPet(...args);
    });

    it("answers /healthz with 503, saying which request failed and how long that is said", async () => {
      expect((await list()).status).toBe(503);
      clock.now += 4_900;
      const during = await world.call("/healthz");
      expect(during.status).toBe(503);
      expect(await during.json()).toEqual({
        status: "unavailable",
        reason:
          "GET /v1/pets met a storage failure 4.9 s ago and has not succeeded since (said until one does, 5 s at most)",
      });
      clock.now += 100;
      expect((await world.call("/healthz")).status).toBe(200);
    });

    it("answers 200 as soon as a request like the failed one succeeds, not 5 s later", async () => {
      expect((await list()).status).toBe(503);
      failing = false;
      clock.now += 1_000;
      expect((await list()).status).toBe(200);
      expect((await world.call("/healthz")).status).toBe(200);
    });

    it("stays 503 while creates fail, whatever reads succeed", async () => {
      world.adapters.store.listPets = async () => [];
      expect((await create()).status).toBe(503);
      clock.now += 1_000;
      expect((await list()).status).toBe(200);
      const answer = await world.call("/healthz");
      expect(answer.status).toBe(503);
      expect(((await answer.json()) as { reason: string }).reason).toMatch(
        /^POST \/v1\/pets met a storage failure 1\.0 s ago/,
      );
    });
  });

  it("answers /healthz with 503 after 2 s when storage hangs", async () => {
    vi.useFakeTimers();
    const { call } = await setup(() => new Promise(() => {}));
    const pending = call("/healthz");
    await vi.advanceTimersByTimeAsync(1_999);
    let settled = false;
    void pending.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const answer = await pending;
    expect(answer.status).toBe(503);
    expect(await answer.json()).toEqual({ status: "unavailable", reason: "storage did not answer within 2 s" });
  });

  it("refuses other methods on /healthz with 405 and Allow", async () => {
    const { call } = await setup();
    const response = await call("/healthz", { method: "POST" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD");
  });

  it("answers paths outside the API with the Error body's 404", async () => {
    const { call } = await setup();
    for (const path of ["/", "/pets", "/v1pets", "/healthz/x"]) {
      const response = await call(path);
      expect(response.status, path).toBe(404);
      expect(await response.json()).toEqual({ code: "not_found", message: `No resource at ${path}`, status: 404 });
    }
  });

  it("serves the API reference at /docs without a key, with the outside paths' headers and its CSP", async () => {
    const { call } = await setup();
    const page = await call("/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("x-request-id")).toBeTruthy();
    expect(await page.text()).toContain('<script src="/docs/swagger-ui-bundle.js"></script>');
    const script = await call("/docs/swagger-initializer.js");
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await script.text()).toContain('url: "/v1/openapi.json"');
    const head = await call("/docs/swagger-ui.css", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/css; charset=utf-8");
    const css = await call("/docs/swagger-ui.css");
    expect(head.headers.get("content-length")).toBe(String((await css.arrayBuffer()).byteLength));
    expect(await head.text()).toBe("");
  });

  it("refuses other methods on /docs with 405 and answers unknown /docs paths with 404", async () => {
    const { call } = await setup();
    const post = await call("/docs", { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    const missing = await call("/docs/missing.js");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      code: "not_found",
      message: "No resource at /docs/missing.js",
      status: 404,
    });
  });

  it("hands requests under the base path to the API with the socket address", async () => {
    const { call, key } = await setup();
    const created = await call("/v1/pets", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    // An anonymous caller's bucket is its address: one address exhausted does not limit another.
    for (let i = 0; i < 60; i++) await call("/v1/pets", {}, "10.0.0.1");
    expect((await call("/v1/pets", {}, "10.0.0.1")).status).toBe(429);
    expect((await call("/v1/pets", {}, "10.0.0.2")).status).toBe(401);
  });

  it("logs one JSON line per request with the key's id and never the key", async () => {
    const { call, lines, key, keyId } = await setup();
    await call("/v1/pets", { headers: { authorization: `Bearer ${key}`, "x-request-id": "trace-1" } });
    await call("/v1/pets", { headers: { authorization: "Bearer psk_wrong" } });
    await call("/healthz", { headers: { authorization: `Bearer ${key}` } });
    expect(lines).toEqual([
      {
        time: expect.any(String),
        requestId: "trace-1",
        method: "GET",
        path: "/v1/pets",
        status: 200,
        durationMs: expect.any(Number),
        keyId,
      },
      {
        time: expect.any(String),
        requestId: expect.any(String),
        method: "GET",
        path: "/v1/pets",
        status: 401,
        durationMs: expect.any(Number),
        client: "127.0.0.1",
      },
      {
        time: expect.any(String),
        requestId: expect.any(String),
        method: "GET",
        path: "/healthz",
        status: 200,
        durationMs: expect.any(Number),
        client: "127.0.0.1",
      },
    ]);
    expect(JSON.stringify(lines)).not.toContain(key);
  });

  it("logs a body the client never finished as 499 aborted, not as a server error", async () => {
    const { call, lines, key, keyId } = await setup();
    const client = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      pull: (controller) => {
        client.abort();
        controller.error(new DOMException("The connection was closed.", "AbortError"));
      },
    });
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    await call("/v1/pets", { method: "POST", headers, body, duplex: "half", signal: client.signal } as RequestInit);
    expect(lines).toEqual([
      {
        time: expect.any(String),
        requestId: expect.any(String),
        method: "POST",
        path: "/v1/pets",
        status: 499,
        aborted: true,
        durationMs: expect.any(Number),
        keyId,
      },
    ]);
  });

  it("writes valid JSON lines whatever the client sent as request id or path", async () => {
    const { call, lines } = await setup();
    const requestId = String.raw`quote"back\slash{"x":1}`;
    await call("/v1/pets/%22%5C", { headers: { "x-request-id": requestId } });
    await call('/docs/"quoted"', { headers: { "x-request-id": requestId } });
    expect(lines.map((line) => [line.requestId, line.path])).toEqual([
      [requestId, "/v1/pets/%22%5C"],
      [requestId, "/docs/%22quoted%22"],
    ]);
  });
});
