import { describe, expect, it } from "vitest";
import type { ResponseEvent } from "../options.js";
import type { ApiKeyRecord } from "../ports.js";
import { beginExchange } from "./exchange.js";
import { finishStage } from "./finish.js";
import { routeFinder } from "./route.js";

const caller: ApiKeyRecord = { id: "key_a", hash: "0".repeat(64), plan: "business", createdAt: 0 };
const answer = () => new Response('{"ok":true}', { status: 200, headers: { "Content-Type": "application/json" } });

function setUp() {
  const events: ResponseEvent[] = [];
  const finish = finishStage({ onResponse: (event) => events.push(event) }, routeFinder("/v1"));
  return { events, finish };
}

describe("finishStage", () => {
  it("answers HEAD with the GET answer's status and headers, its length, and no body", async () => {
    const finish = finishStage({ onResponse: undefined }, routeFinder("/v1"));
    const head = await finish(beginExchange(new Request("http://petstore.test/v1/pets", { method: "HEAD" }), undefined, 0), answer());
    expect([head.status, head.headers.get("content-length"), head.headers.get("content-type"), await head.text()]).toEqual([200, "11", "application/json", ""]);
  });

  it("passes other answers on untouched, without a promise, when nobody listens", () => {
    const finish = finishStage({ onResponse: undefined }, routeFinder("/v1"));
    const response = answer();
    expect(finish(beginExchange(new Request("http://petstore.test/v1/pets"), undefined, 0), response)).toBe(response);
  });

  it("tells onResponse what the stages found: key, plan, key cache, route pattern, error code, ban", async () => {
    const { events, finish } = setUp();
    const exchange = beginExchange(new Request("http://petstore.test/v1/pets/42", { headers: { "X-Request-Id": "r-9" } }), undefined, 0);
    exchange.identity = { caller, keyCache: "hit" };
    exchange.errorCode = "temporarily_banned";
    exchange.banStarted = true;
    const response = answer();
    expect(await finish(exchange, response)).toBe(response);
    expect(events).toEqual([
      { request: exchange.request, response, requestId: "r-9", durationMs: expect.any(Number), keyId: "key_a", plan: "business", keyCache: "hit", errorCode: "temporarily_banned", banStarted: true, route: "/pets/:petId" },
    ]);
  });

  it("reports an anonymous caller's address, no route for an unknown path, and an aborted body", async () => {
    const { events, finish } = setUp();
    const exchange = beginExchange(new Request("http://petstore.test/v1/cats"), undefined, 0);
    exchange.identity = { caller: undefined, sentKey: false };
    exchange.client = "203.0.113.7";
    exchange.aborted = true;
    await finish(exchange, answer());
    expect(events[0]).toEqual({ request: exchange.request, response: expect.any(Response), requestId: exchange.requestId, durationMs: expect.any(Number), clientAddress: "203.0.113.7", aborted: true });
  });

  it("reports the HEAD answer, not the GET answer it came from", async () => {
    const { events, finish } = setUp();
    const head = await finish(beginExchange(new Request("http://petstore.test/v1/openapi.json", { method: "HEAD" }), undefined, 0), answer());
    expect(events[0]?.response).toBe(head);
    expect(events[0]?.route).toBe("/openapi.json");
  });
});
