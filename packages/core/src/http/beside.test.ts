import { memoryAdapters } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import { createPetstore } from "../app.js";
import type { ResponseEvent } from "../options.js";

const CLIENT = { clientAddress: "203.0.113.7" };

function setUp() {
  const events: ResponseEvent[] = [];
  const petstore = createPetstore({
    ...memoryAdapters(),
    beside: (pathname) => (pathname === "/healthz" ? () => Response.json({ status: "ok" }) : undefined),
    onResponse: (event) => events.push(event),
  });
  return { petstore, events };
}

describe("beside: the host's pages outside the base path", () => {
  it("answers a page through the API's edge: the request id, the headers of every answer, onResponse with the client", async () => {
    const { petstore, events } = setUp();
    const response = await petstore.request("http://test/healthz", { headers: { "X-Request-Id": "health-1" } }, CLIENT);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
    expect(response.headers.get("x-request-id")).toBe("health-1");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("x-ratelimit-limit")).toBeNull(); // never limited
    expect(events).toEqual([
      expect.objectContaining({ requestId: "health-1", pathname: "/healthz", clientAddress: "203.0.113.7" }),
    ]);
    expect(events[0]!.route).toBeUndefined();
  });

  it("answers HEAD without a body, another method with 405 and Allow, another path with the Error body's 404", async () => {
    const { petstore } = setUp();
    const head = await petstore.request("http://test/healthz", { method: "HEAD" });
    expect([head.status, await head.text()]).toEqual([200, ""]);
    const post = await petstore.request("http://test/healthz", { method: "POST" });
    expect([post.status, post.headers.get("allow"), (await post.json()).code]).toEqual([
      405,
      "GET, HEAD",
      "method_not_allowed",
    ]);
    const other = await petstore.request("http://test/v2/pets");
    expect([other.status, (await other.json()).code, other.headers.get("x-request-id")]).toEqual([
      404,
      "not_found",
      expect.any(String),
    ]);
  });

  it("keeps answering a client the API refuses: its pages are neither limited nor authenticated", async () => {
    const { petstore } = setUp();
    // Free's 60 a minute, then refusals (a ban after 20 of them).
    for (let i = 0; i < 90; i += 1) await petstore.request("http://test/v1/pets", {}, CLIENT);
    expect((await petstore.request("http://test/v1/pets", {}, CLIENT)).status).toBe(429);
    expect((await petstore.request("http://test/healthz", {}, CLIENT)).status).toBe(200);
  });

  it("answers a page that throws with the Error body's 500 and tells onError; a page with immutable headers gets the API's too", async () => {
    const errors: unknown[] = [];
    const events: ResponseEvent[] = [];
    const petstore = createPetstore({
      ...memoryAdapters(),
      beside: (pathname) =>
        pathname === "/broken"
          ? () => Promise.reject(new Error("page failed"))
          : pathname === "/moved"
            ? () => Response.redirect("http://test/healthz", 302)
            : undefined,
      onError: (error) => void errors.push(error),
      onResponse: (event) => events.push(event),
    });
    const broken = await petstore.request("http://test/broken", { headers: { "X-Request-Id": "b-1" } }, CLIENT);
    expect(broken.status).toBe(500);
    expect(await broken.json()).toMatchObject({ code: "internal_error", status: 500 });
    expect(broken.headers.get("x-request-id")).toBe("b-1");
    expect(errors).toEqual([expect.objectContaining({ message: "page failed" })]);
    const moved = await petstore.request("http://test/moved", { headers: { "X-Request-Id": "m-1" } }, CLIENT);
    expect([moved.status, moved.headers.get("location"), moved.headers.get("x-request-id")]).toEqual([
      302,
      "http://test/healthz",
      "m-1",
    ]);
    expect(events.map((event) => event.response.status)).toEqual([500, 302]);
  });

  it("leaves every path under the base path to the API", async () => {
    const { petstore } = setUp();
    const unknown = await petstore.request("http://test/v1/healthz", {}, CLIENT);
    expect(unknown.status).toBe(401); // the API's own answer to an anonymous caller
    expect(unknown.headers.get("x-ratelimit-limit")).toBe("60");
  });
});
