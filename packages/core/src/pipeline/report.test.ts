import { memoryAdapters } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import { ApiError } from "../errors.js";
import { resolveOptions } from "../options.js";
import type { ResponseEvent } from "../options.js";
import type { ApiKeyRecord, Decision } from "../ports.js";
import { createPetstore } from "../app.js";
import { arrive } from "./arrival.js";
import { type Findings, reportStage } from "./report.js";
import { routeTable } from "../http/route-table.js";
import { ROUTES } from "../routes.js";

const T0 = Date.UTC(2030, 0, 15, 12);
const caller: ApiKeyRecord = { id: "key_a", accountId: "acct_a", hash: "0".repeat(64), plan: "business", createdAt: 0 };
const settings = resolveOptions(memoryAdapters());
const answer = () => new Response('{"ok":true}', { status: 200, headers: { "Content-Type": "application/json" } });
const findRoute = routeTable(ROUTES, "/v1");

/** What the stages found for a request to `url`: nothing but its arrival and its route, unless told. */
async function findings(url: string, init: RequestInit = {}, found: Partial<Findings> = {}): Promise<Findings> {
  const request = new Request(url, init);
  const arrival = arrive(request, T0, performance.now());
  const match = findRoute(arrival.pathname);
  return {
    request,
    info: undefined,
    arrival,
    match,
    identity: undefined,
    bucket: undefined,
    decision: undefined,
    failure: undefined,
    ...found,
  };
}

function setUp() {
  const events: ResponseEvent[] = [];
  return { events, report: reportStage({ ...settings, onResponse: (event) => events.push(event) }) };
}

describe("reportStage", () => {
  it("does nothing when nobody listens", async () => {
    expect(() =>
      reportStage(settings)(answer(), {
        request: new Request("http://petstore.test/v1/pets"),
        info: undefined,
        arrival: arrive(new Request("http://petstore.test/v1/pets"), T0, performance.now()),
        match: undefined,
        identity: undefined,
        bucket: undefined,
        decision: undefined,
        failure: undefined,
      }),
    ).not.toThrow();
  });

  it("tells onResponse what the stages found: key, plan, key cache, route pattern, error code", async () => {
    const { events, report } = setUp();
    const found = await findings(
      "http://petstore.test/v1/pets/42",
      { headers: { "X-Request-Id": "r-9" } },
      { identity: { caller, keyCache: "hit" } },
    );
    const failure = { response: answer(), error: new ApiError("not_found", "Pet 42 was not found"), aborted: false };
    report(failure.response, { ...found, failure });
    expect(events).toEqual([
      {
        request: found.request,
        response: failure.response,
        requestId: "r-9",
        pathname: "/v1/pets/42",
        durationMs: expect.any(Number),
        keyId: "key_a",
        plan: "business",
        keyCache: "hit",
        errorCode: "not_found",
        route: "/pets/:petId",
      },
    ]);
  });

  it("marks the refusal whose decision began a ban, and only it", async () => {
    const { events, report } = setUp();
    const banned: Decision = {
      allowed: false,
      windows: [{ name: "minute", limit: 60, remaining: 0, resetAt: T0 + 60_000, exceeded: true }],
      bannedUntil: T0 + 600_000,
      now: T0,
    };
    const bucket = { name: "ip:192.0.2.1", client: "192.0.2.1", limits: settings.limitsOf(undefined) };
    for (const decision of [{ ...banned, banStarted: true as const }, banned])
      report(answer(), await findings("http://petstore.test/v1/pets", {}, { bucket, decision }));
    expect(events.map((event) => event.banStarted)).toEqual([true, undefined]);
  });

  it("reports an anonymous caller's address, no route for an unknown path, and an aborted body", async () => {
    const { events, report } = setUp();
    const bucket = { name: "ip:203.0.113.7", client: "203.0.113.7", limits: settings.limitsOf(undefined) };
    const failure = { response: answer(), error: new ApiError("invalid_body", "ended"), aborted: true };
    const found = await findings(
      "http://petstore.test/v1/cats",
      {},
      { identity: { caller: undefined, sentKey: false }, bucket, failure },
    );
    report(failure.response, found);
    expect(events[0]).toEqual({
      request: found.request,
      response: failure.response,
      requestId: found.arrival.requestId,
      pathname: "/v1/cats",
      durationMs: expect.any(Number),
      clientAddress: "203.0.113.7",
      errorCode: "invalid_body",
      aborted: true,
    });
  });

  it("reports the HEAD answer, not the GET answer it came from", async () => {
    const events: ResponseEvent[] = [];
    const petstore = createPetstore({ ...memoryAdapters(), onResponse: (event) => events.push(event) });
    const head = await petstore.request(
      "http://petstore.test/v1/openapi.json",
      { method: "HEAD" },
      { clientAddress: "192.0.2.1" },
    );
    expect(events[0]?.response).toBe(head);
    expect(events[0]?.route).toBe("/openapi.json");
    expect([head.status, await head.text(), Number(head.headers.get("content-length"))]).toEqual([
      200,
      "",
      expect.any(Number),
    ]);
    expect(Number(head.headers.get("content-length"))).toBeGreaterThan(1000);
  });
});
