import { describe, expect, it } from "vitest";
import { parseLimiterUrl } from "./limiter-url.js";

describe("parseLimiterUrl", () => {
  it("leaves one Redis's URL to ioredis, TLS and database included", () => {
    expect(parseLimiterUrl("redis://127.0.0.1:6379/2")).toEqual({ kind: "single", url: "redis://127.0.0.1:6379/2" });
    expect(parseLimiterUrl("rediss://user:pw@cache.internal")).toEqual({
      kind: "single",
      url: "rediss://user:pw@cache.internal",
    });
  });

  it("reads a cluster's seed nodes, default port 6379, IPv6 in brackets, and its credentials decoded", () => {
    expect(parseLimiterUrl("redis+cluster://app:p%40ss@10.0.0.1:7000,10.0.0.2,[::1]:7002")).toEqual({
      kind: "cluster",
      nodes: [
        { host: "10.0.0.1", port: 7000 },
        { host: "10.0.0.2", port: 6379 },
        { host: "::1", port: 7002 },
      ],
      tls: false,
      username: "app",
      password: "p@ss",
    });
    expect(parseLimiterUrl("rediss+cluster://:pw@a:7000/")).toEqual({
      kind: "cluster",
      nodes: [{ host: "a", port: 7000 }],
      tls: true,
      password: "pw",
    });
  });

  it("reads the sentinels (default port 26379), the master's name and its database", () => {
    expect(parseLimiterUrl("redis+sentinel://s1:26380,s2,s3/mymaster/4")).toEqual({
      kind: "sentinel",
      sentinels: [
        { host: "s1", port: 26380 },
        { host: "s2", port: 26379 },
        { host: "s3", port: 26379 },
      ],
      name: "mymaster",
      db: 4,
      tls: false,
    });
    expect(parseLimiterUrl("rediss+sentinel://:pw@s1:26379/main")).toMatchObject({
      kind: "sentinel",
      name: "main",
      db: 0,
      tls: true,
      password: "pw",
    });
  });

  it.each([
    ["redis://a:6379,b:6379", /must be redis:\/\//],
    ["memcached://a", /must be redis:\/\//],
    ["redis+sentinel://s1:26379", /needs the master's name/],
    ["redis+sentinel://s1:26379/main/x", /needs the master's name/],
    ["redis+cluster://a:7000/1", /only database 0/],
    ["redis+cluster://a:0", /'a:0' is not HOST\[:PORT\]/],
  ])("refuses %s, saying why without repeating it", (url, message) => {
    expect(() => parseLimiterUrl(url)).toThrow(message);
  });
});
