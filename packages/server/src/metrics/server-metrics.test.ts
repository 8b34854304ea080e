import { spawnSync } from "node:child_process";
import { memoryAdapters } from "@petstore/adapters/memory";
import { issueApiKey, StorageUnavailableError } from "@petstore/core";
import { describe, expect, it } from "vitest";
import { health } from "../http/health.js";
import { serverFetch } from "../http/server-fetch.js";
import { metricsFetch } from "./metrics-fetch.js";
import { serverMetrics } from "./server-metrics.js";

const BUILD = { version: "1.2.3", commit: "abc1234", target: "bun-linux-x64" };

/** The server's request path with metrics, on memory adapters and a clock the test moves. */
async function setup() {
  const adapters = memoryAdapters();
  const clock = { now: Date.UTC(2026, 10, 23, 12, 0, 0), monotonic: 0 };
  const metrics = serverMetrics({
    build: BUILD,
    clock: () => clock.now,
    monotonic: () => clock.monotonic,
    rss: () => 123_456,
  });
  const { fetch } = serverFetch({
    api: { ...adapters, clock: () => clock.now, ban: { threshold: 2, seconds: 60 } },
    basePath: "/v1",
    health: health(async () => {}),
    log: () => {},
    metrics,
  });
  const call = (path: string, init: RequestInit = {}) =>
    fetch(new Request(`http://petstore.test${path}`, init), () => "192.0.2.1");
  const scrape = async () =>
    (await metricsFetch(metrics)(new Request("http://127.0.0.1:9464/metrics"), () => undefined)).text();
  return { adapters, clock, metrics, call, scrape };
}

/** The lines of a scrape that start with `name` (its samples), without HELP and TYPE. */
const samples = (text: string, name: string) => text.split("\n").filter((line) => line.startsWith(name));

describe("the server's metrics", () => {
  it("counts answers by route pattern, method and status, never by raw path", async () => {
    const { adapters, call, scrape } = await setup();
    const { key } = await issueApiKey(adapters.keys, { plan: "pro" });
    const auth = { headers: { Authorization: `Bearer ${key}` } };
    await call("/v1/pets/1", auth);
    await call("/v1/pets/2", auth);
    await call("/v1/pets", {
      ...auth,
      method: "POST",
      headers: { ...auth.headers, "Content-Type": "application/json" },
      body: '{"name":"Rex","categoryId":1}',
    });
    await call("/nope/psk_notakey", auth);
    await call("/healthz", { method: "BREW" });
    await call("/docs");
    const text = await scrape();
    expect(samples(text, "petstore_http_requests_total")).toEqual([
      'petstore_http_requests_total{route="/v1/pets/:petId",method="GET",status="404"} 2',
      'petstore_http_requests_total{route="/v1/pets",method="POST",status="201"} 1',
      'petstore_http_requests_total{route="other",method="GET",status="404"} 1',
      'petstore_http_requests_total{route="/healthz",method="OTHER",status="405"} 1',
      'petstore_http_requests_total{route="/docs",method="GET",status="200"} 1',
    ]);
    expect(text).not.toContain("psk_");
    expect(samples(text, 'petstore_http_request_duration_seconds_count{route="/v1/pets/:petId"}')).toEqual([
      'petstore_http_request_duration_seconds_count{route="/v1/pets/:petId"} 2',
    ]);
    expect(samples(text, 'petstore_http_request_duration_seconds_bucket{route="/v1/pets/:petId",le="+Inf"}')).toEqual([
      'petstore_http_request_duration_seconds_bucket{route="/v1/pets/:petId",le="+Inf"} 2',
    ]);
    expect(samples(text, "petstore_key_cache_lookups_total")).toEqual([
      'petstore_key_cache_lookups_total{result="hit"} 2',
      'petstore_key_cache_lookups_total{result="miss"} 1',
    ]);
  });

  it("counts refusals and bans by plan, 401s and storage failures", async () => {
    const { adapters, call, scrape } = await setup();
    const { key } = await issueApiKey(adapters.keys, { plan: "pro", perMinute: 1, perDay: 100 });
    const auth = { headers: { Authorization: `Bearer ${key}` } };
    for (let i = 0; i < 5; i++) await call("/v1/pets", auth);
    await call("/v1/pets");
    adapters.store.listPets = async () => {
      throw new StorageUnavailableError();
    };
    // A page not served before: core's page cache asks the store.
    await call("/v1/pets?limit=7", {
      headers: { Authorization: `Bearer ${(await issueApiKey(adapters.keys, { plan: "free" })).key}` },
    });
    const text = await scrape();
    expect(samples(text, "petstore_rate_limit_refusals_total")).toEqual([
      'petstore_rate_limit_refusals_total{plan="pro",reason="rate_limited"} 2',
      'petstore_rate_limit_refusals_total{plan="pro",reason="temporarily_banned"} 2',
    ]);
    expect(samples(text, "petstore_bans_total")).toEqual(['petstore_bans_total{plan="pro"} 1']);
    expect(samples(text, "petstore_unauthorized_total")).toEqual(["petstore_unauthorized_total 1"]);
    expect(samples(text, "petstore_storage_failures_total")).toEqual(["petstore_storage_failures_total 1"]);
  });

  it("reports the build, memory, uptime, requests in flight and libSQL batches", async () => {
    const { clock, metrics, scrape } = await setup();
    // The uptime is the monotonic clock's: the wall clock stepped back an hour meanwhile.
    clock.now += 90_000 - 3_600_000;
    clock.monotonic += 90_000;
    metrics.requestStarted();
    metrics.storage.onBatch({ units: 3, commitMs: 2 });
    metrics.storage.onFsync(4);
    const text = await scrape();
    expect(samples(text, "petstore_build_info")).toEqual([
      'petstore_build_info{version="1.2.3",commit="abc1234",target="bun-linux-x64"} 1',
    ]);
    expect(samples(text, "petstore_process_resident_memory_bytes")).toEqual([
      "petstore_process_resident_memory_bytes 123456",
    ]);
    expect(samples(text, "petstore_process_uptime_seconds")).toEqual(["petstore_process_uptime_seconds 90"]);
    expect(samples(text, "petstore_http_requests_in_flight")).toEqual(["petstore_http_requests_in_flight 1"]);
    expect(samples(text, "petstore_libsql_write_batch_units_bucket")).toContain(
      'petstore_libsql_write_batch_units_bucket{le="2"} 0',
    );
    expect(samples(text, "petstore_libsql_write_batch_units_bucket")).toContain(
      'petstore_libsql_write_batch_units_bucket{le="5"} 1',
    );
    expect(samples(text, "petstore_libsql_commit_seconds_sum")).toEqual(["petstore_libsql_commit_seconds_sum 0.002"]);
    expect(samples(text, "petstore_libsql_fsync_seconds_count")).toEqual(["petstore_libsql_fsync_seconds_count 1"]);
  });

  it("counts the steps of each store's clock, the database's from zero", async () => {
    const { metrics, scrape } = await setup();
    expect(samples(await scrape(), "petstore_clock_steps_total")).toEqual([
      'petstore_clock_steps_total{store="database"} 0',
    ]);
    metrics.clockStep("database");
    metrics.clockStep("limiter");
    expect(samples(await scrape(), "petstore_clock_steps_total")).toEqual([
      'petstore_clock_steps_total{store="database"} 1',
      'petstore_clock_steps_total{store="limiter"} 1',
    ]);
  });

  it("serves the exposition only at GET /metrics, and promtool accepts it", async () => {
    const { call, metrics, scrape } = await setup();
    await call("/v1/pets");
    const serve = metricsFetch(metrics);
    const response = await serve(new Request("http://127.0.0.1:9464/metrics"), () => undefined);
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect((await serve(new Request("http://127.0.0.1:9464/"), () => undefined)).status).toBe(404);
    expect(
      (await serve(new Request("http://127.0.0.1:9464/metrics", { method: "POST" }), () => undefined)).status,
    ).toBe(405);
    const checked = spawnSync("promtool", ["check", "metrics"], {
      input: await scrape(),
      encoding: "utf8",
      timeout: 10_000,
    });
    expect(checked.error).toBeUndefined();
    expect({ status: checked.status, output: checked.stdout + checked.stderr }).toEqual({ status: 0, output: "" });
  });
});
