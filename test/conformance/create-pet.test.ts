import type { ResponseEvent } from "@petstore/core";
import { describe, expect, it } from "vitest";
import { ADAPTER_KITS, beforeEachWorld, errorBody, openWorld, ROOMY_LIMITS, type World } from "./harness.js";

describe.each(ADAPTER_KITS)("createPet on $name", (kit) => {
  let world: World;
  let key: string;
  beforeEachWorld(kit, ROOMY_LIMITS, (opened, freeKey) => ([world, key] = [opened, freeKey]));

  const post = (body: unknown, headers?: Record<string, string>) =>
    world.call("POST", "/v1/pets", { key, body, ...(headers ? { headers } : {}) });
  const postRaw = (raw: string, headers: Record<string, string> = { "Content-Type": "application/json" }) =>
    world.call("POST", "/v1/pets", { key, raw, headers });

  it("returns 201 with the Pet, its new id and a Location header", async () => {
    const response = await post({ name: "Rex", categoryId: 7, status: "available" });
    expect(response.status).toBe(201);
    const pet = await response.json();
    expect(pet).toEqual({ id: 1, name: "Rex", categoryId: 7, status: "available" });
    expect(response.headers.get("location")).toBe("/v1/pets/1");
    const fetched = await world.call("GET", "/v1/pets/1", { key });
    expect(await fetched.json()).toEqual(pet);
  });

  it("gives every pet a new unique, increasing id", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await world.createPet(key)).id);
    expect(ids).toEqual([1, 2, 3, 4, 5]);
  });

  it("omits status when it was not given (no invented default)", async () => {
    const response = await post({ name: "Rex", categoryId: 1 });
    const pet = (await response.json()) as Record<string, unknown>;
    expect(pet).toEqual({ id: 1, name: "Rex", categoryId: 1 });
    expect("status" in pet).toBe(false);
  });

  it("stores the name trimmed", async () => {
    const pet = await (await post({ name: "  Rex \t", categoryId: 1 })).json();
    expect(pet).toMatchObject({ name: "Rex" });
  });

  it("accepts a name of 100 characters, counting code points", async () => {
    expect((await post({ name: "x".repeat(100), categoryId: 1 })).status).toBe(201);
    expect((await post({ name: "🐕".repeat(100), categoryId: 1 })).status).toBe(201);
  });

  it("returns 400 invalid_body listing every missing required field", async () => {
    const body = await errorBody(await post({}), 400, "invalid_body");
    expect(body.details).toEqual(
      expect.arrayContaining([
        { path: "name", message: "is required" },
        { path: "categoryId", message: "is required" },
      ]),
    );
    expect(body.details).toHaveLength(2);
  });

  it.each([
    ["name missing", { categoryId: 1 }, "name"],
    ["categoryId missing", { name: "Rex" }, "categoryId"],
    ["status outside the enumeration", { name: "Rex", categoryId: 1, status: "lost" }, "status"],
    ["name empty", { name: "", categoryId: 1 }, "name"],
    ["name only whitespace", { name: "   ", categoryId: 1 }, "name"],
    ["name over 100 characters", { name: "x".repeat(101), categoryId: 1 }, "name"],
    ["name with a control character", { name: "Re\u0007x", categoryId: 1 }, "name"],
    ["name with a newline", { name: "Re\nx", categoryId: 1 }, "name"],
    ["name not a string", { name: 42, categoryId: 1 }, "name"],
    ["categoryId a string", { name: "Rex", categoryId: "1" }, "categoryId"],
    ["categoryId fractional", { name: "Rex", categoryId: 1.5 }, "categoryId"],
    ["categoryId zero", { name: "Rex", categoryId: 0 }, "categoryId"],
    ["categoryId negative", { name: "Rex", categoryId: -3 }, "categoryId"],
    ["categoryId above 2^53-1", { name: "Rex", categoryId: 9007199254740992 }, "categoryId"],
    ["status null", { name: "Rex", categoryId: 1, status: null }, "status"],
    ["an id sent by the client", { id: 5, name: "Rex", categoryId: 1 }, "id"],
    ["an unknown field", { name: "Rex", categoryId: 1, color: "brown" }, "color"],
  ])("returns 400 invalid_body for %s", async (_rule, input, path) => {
    const body = await errorBody(await post(input), 400, "invalid_body");
    expect(body.details?.map((d) => d.path)).toContain(path);
    expect(body.details?.every((d) => typeof d.message === "string" && d.message.length > 0)).toBe(true);
  });

  it("lists every problem of the body at once", async () => {
    const body = await errorBody(
      await post({ name: "", categoryId: "x", status: "lost", id: 1, extra: true }),
      400,
      "invalid_body",
    );
    expect(body.details?.map((d) => d.path).sort()).toEqual(["categoryId", "extra", "id", "name", "status"]);
  });

  it("accepts the largest safe integer as categoryId", async () => {
    expect((await post({ name: "Rex", categoryId: 9007199254740991 })).status).toBe(201);
  });

  it.each([
    ["not JSON", "{name: Rex}"],
    ["empty", ""],
    ["truncated JSON", '{"name":"Rex",'],
    ["a JSON array", "[]"],
    ["JSON null", "null"],
    ["a JSON string", '"Rex"'],
    ["a JSON number", "42"],
  ])("returns 400 invalid_body when the body is %s", async (_what, raw) => {
    const body = await errorBody(await postRaw(raw), 400, "invalid_body");
    expect(body.details?.length).toBeGreaterThan(0);
  });

  // JSON escapes can spell half a UTF-16 pair, which no UTF-8 store can hold: it would come
  // back as U+FFFD, another name than the one acknowledged.
  it.each(['"\\ud800"', '"Rex\\udc15"', '"\\udc15\\ud83d"'])(
    "returns 400 invalid_body for a name with an unpaired surrogate, %s",
    async (name) => {
      const body = await errorBody(await postRaw(`{"name":${name},"categoryId":1}`), 400, "invalid_body");
      expect(body.details).toEqual([{ path: "name", message: "must be well-formed Unicode (no unpaired surrogate)" }]);
    },
  );

  it("accepts a surrogate pair written as JSON escapes", async () => {
    const response = await postRaw('{"name":"\\ud83d\\udc15","categoryId":1}');
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ name: "🐕" });
  });

  it("returns 400 invalid_body for a body that is not UTF-8", async () => {
    const bytes = new Uint8Array([0x7b, 0x22, 0x6e, 0xff, 0x22, 0x3a, 0x31, 0x7d]);
    const request = new Request("http://petstore.test/v1/pets", {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: bytes,
    });
    await errorBody(await world.petstore.fetch(request, { clientAddress: "203.0.113.7" }), 400, "invalid_body");
  });

  it.each([
    "application/json",
    "application/json; charset=utf-8",
    "APPLICATION/JSON",
    "application/vnd.petstore+json",
    "Application/Problem+JSON;v=1",
  ])("accepts Content-Type '%s'", async (contentType) => {
    expect((await postRaw('{"name":"Rex","categoryId":1}', { "Content-Type": contentType })).status).toBe(201);
  });

  it.each([
    "text/plain",
    "application/x-www-form-urlencoded",
    "application/jsonp",
    "json",
    "text/json",
    "foo/json",
    "application/json+x",
    "multipart/form-data; boundary=x",
  ])("returns 415 unsupported_media_type for Content-Type '%s'", async (contentType) => {
    await errorBody(
      await postRaw('{"name":"Rex","categoryId":1}', { "Content-Type": contentType }),
      415,
      "unsupported_media_type",
    );
  });

  it("returns 415 unsupported_media_type when Content-Type is missing", async () => {
    const request = new Request("http://petstore.test/v1/pets", {
      method: "POST",
      headers: { Authorization: `Bearer ${key}` },
      body: new Blob(['{"name":"Rex","categoryId":1}']),
    });
    await errorBody(
      await world.petstore.fetch(request, { clientAddress: "203.0.113.7" }),
      415,
      "unsupported_media_type",
    );
  });

  it("returns 413 payload_too_large for a body over 16 KiB, and accepts one of exactly 16 KiB", async () => {
    const padding = (size: number) => {
      const base = '{"name":"Rex","categoryId":1}';
      return `${base.slice(0, -1) + " ".repeat(size - base.length)}}`;
    };
    expect((await postRaw(padding(16 * 1024))).status).toBe(201);
    await errorBody(await postRaw(padding(16 * 1024 + 1)), 413, "payload_too_large");
  });

  it("returns 413 for a streamed body over 16 KiB that declares no length", async () => {
    const chunk = new TextEncoder().encode(" ".repeat(4096));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 8) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const request = new Request("http://petstore.test/v1/pets", {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    await errorBody(await world.petstore.fetch(request, { clientAddress: "203.0.113.7" }), 413, "payload_too_large");
  });

  // What the runtimes hand over when the socket closes before the declared length arrived.
  const hostsOnAbort = {
    Bun: (client: AbortController) => {
      client.abort();
      return new DOMException("The connection was closed.", "AbortError");
    },
    Deno: () =>
      Object.assign(new Error("Cannot read body as underlying resource unavailable"), { name: "BadResource" }),
  };

  it.each(Object.entries(hostsOnAbort))(
    "writes nothing and reports no internal error when the client goes away mid-body (as %s says it)",
    async (_host, abort) => {
      const events: ResponseEvent[] = [];
      const observed = await openWorld(kit, { onResponse: (event) => events.push(event) });
      const proKey = await observed.key({ plan: "pro" });
      const client = new AbortController();
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => controller.enqueue(new TextEncoder().encode('{"name":"Rex",')),
        pull: (controller) => controller.error(abort(client)),
      });
      const request = new Request("http://petstore.test/v1/pets", {
        method: "POST",
        headers: { Authorization: `Bearer ${proKey}`, "Content-Type": "application/json", "Content-Length": "100" },
        body,
        duplex: "half",
        signal: client.signal,
      } as RequestInit);
      await errorBody(await observed.petstore.fetch(request, { clientAddress: "203.0.113.7" }), 400, "invalid_body");
      expect(observed.internalErrors).toEqual([]);
      expect(events.map((event) => event.aborted)).toEqual([true]);
      expect(await (await observed.call("GET", "/v1/pets", { key: proKey })).json()).toEqual([]);
      expect(events.map((event) => event.aborted)).toEqual([true, undefined]);
      await observed.close();
    },
  );

  it("reports a body read before createPet as an internal error: the host's bug, not an abort", async () => {
    const request = new Request("http://petstore.test/v1/pets", {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: '{"name":"Rex","categoryId":1}',
    });
    await request.text();
    await errorBody(await world.petstore.fetch(request, { clientAddress: "203.0.113.7" }), 500, "internal_error");
    expect(world.internalErrors.splice(0).map(String)).toEqual([
      "TypeError: The request body was read before its handler",
    ]);
  });

  it("writes nothing when a create is rejected", async () => {
    await post({ name: "", categoryId: 1 });
    await postRaw("nope");
    await postRaw('{"name":"Rex","categoryId":1}', { "Content-Type": "text/plain" });
    expect(await (await world.call("GET", "/v1/pets", { key })).json()).toEqual([]);
    expect((await world.createPet(key)).id).toBe(1);
  });
});
