import { describe, expect, it } from "vitest";
import { hostPort } from "./host-port.js";

describe("hostPort", () => {
  it("reads a name or an IPv4 address with and without a port", () => {
    expect(hostPort("redis.internal")).toEqual({ host: "redis.internal", port: undefined });
    expect(hostPort("127.0.0.1:9464")).toEqual({ host: "127.0.0.1", port: "9464" });
  });

  it("reads an IPv6 address in brackets, without them", () => {
    expect(hostPort("[::1]")).toEqual({ host: "::1", port: undefined });
    expect(hostPort("[2001:db8::1]:5432")).toEqual({ host: "2001:db8::1", port: "5432" });
  });

  it("refuses an IPv6 address without brackets, an empty host, a port that is not digits", () => {
    for (const text of ["::1", "2001:db8::1:80", ":80", "", "host:", "host:http", "[::1]x", "a b:1"]) {
      expect(hostPort(text), text).toBeUndefined();
    }
  });
});
