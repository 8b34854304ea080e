import { describe, expect, it } from "vitest";
import { headResponse } from "./head-response.js";

describe("headResponse", () => {
  it("keeps the status and headers, drops the body and says its length in bytes", async () => {
    const get = new Response('{"name":"Zoë"}', {
      status: 404,
      headers: { "Content-Type": "application/json", "X-Request-Id": "r-1" },
    });
    const head = await headResponse(get);
    expect(head.status).toBe(404);
    expect(head.headers.get("content-type")).toBe("application/json");
    expect(head.headers.get("x-request-id")).toBe("r-1");
    expect(head.headers.get("content-length")).toBe("15");
    expect(await head.text()).toBe("");
  });

  it("says 0 for an empty body", async () => {
    expect((await headResponse(new Response(null, { status: 204 }))).headers.get("content-length")).toBe("0");
  });
});
