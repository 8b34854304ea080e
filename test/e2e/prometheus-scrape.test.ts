import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinary } from "./_binary.js";
import { client } from "./_http.js";
import {
  binaryServe,
  cleanUp,
  createKey,
  onFreePort,
  type Server,
  startServer,
  stopProcess,
  tempDir,
  waitFor,
} from "./_processes.js";

beforeAll(() => void ensureBinary(), 120_000);

/** Prometheus, killed by its PID whatever happens. */
let prometheus: ChildProcess | undefined;
afterAll(async () => {
  if (prometheus) await stopProcess(prometheus, "SIGKILL");
  await cleanUp();
});

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

/** One PromQL instant query through Prometheus's HTTP API. */
async function query(base: string, promql: string): Promise<Sample[]> {
  const response = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await response.json()) as { status: string; data: { result: Sample[] } };
  if (body.status !== "success") throw new Error(`${promql}: ${JSON.stringify(body)}`);
  return body.data.result;
}

/** The query's samples as { labels-of-interest: value }, for comparing with what was sent. */
async function totals(base: string, promql: string, label: string): Promise<Record<string, number>> {
  return Object.fromEntries(
    (await query(base, promql)).map((sample) => [sample.metric[label] ?? "", Number(sample.value[1])]),
  );
}

/** Prometheus's configuration: the one target, scraped every second. */
function scrapeConfig(target: string): string {
  return [
    "global:",
    "  scrape_interval: 1s",
    "scrape_configs:",
    "  - job_name: petstore",
    "    static_configs:",
    `      - targets: ["${target}"]`,
    "",
  ].join("\n");
}

/** Prometheus started on a free port, scraping `target`; its base URL once it is ready. */
function startPrometheus(dir: string, target: string): Promise<string> {
  writeFileSync(join(dir, "prometheus.yml"), scrapeConfig(target));
  return onFreePort(async (port) => {
    const log: string[] = [];
    prometheus = spawn(
      "prometheus",
      [
        `--config.file=${join(dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(dir, "tsdb")}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    prometheus.stderr!.on("data", (chunk: Buffer) => log.push(chunk.toString()));
    const exited = new Promise<never>((_, reject) =>
      prometheus!.once("exit", () => reject(new Error(`prometheus exited:\n${log.join("")}`))),
    );
    const ready = waitFor(() => log.join("").includes("Server is ready to receive web requests"), 20_000, {
      what: () => `prometheus to start:\n${log.join("")}`,
    });
    await Promise.race([ready, exited]);
    return `http://127.0.0.1:${port}`;
  });
}

describe("Prometheus scraping the binary's metrics listener", () => {
  // One server with a key of five requests a day, scraped by one Prometheus; the steps count on each other's requests.
  let server: Server;
  let key: string;
  let metricsUrl: string | undefined;
  let base: string;

  beforeAll(async () => {
    const dir = tempDir();
    const db = `file:${join(dir, "scraped.db")}`;
    // Five requests a day: the sixth and later are refused however the minute falls.
    ({ key } = await createKey(db, ["--plan", "free", "--per-minute", "5", "--per-day", "5"]));
    server = await startServer([...binaryServe(db), "--metrics-listen", "127.0.0.1:0"]);
    metricsUrl = server.stdout
      .map((line) => JSON.parse(line) as { event?: string; url?: string })
      .find((entry) => entry.event === "metrics listening")?.url;
    if (metricsUrl) base = await startPrometheus(dir, new URL(metricsUrl).host);
  }, 60_000);

  it("announces its metrics listener's URL on stdout", () => {
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  });

  it("serves an exposition that Prometheus's own checker finds valid", async () => {
    const exposition = await (await fetch(metricsUrl!)).text();
    const checked = spawnSync("promtool", ["check", "metrics"], {
      input: exposition,
      encoding: "utf8",
      timeout: 10_000,
    });
    expect({ status: checked.status, output: checked.stdout + checked.stderr }).toEqual({ status: 0, output: "" });
  });

  it("does not serve the metrics on the API's port", async () => {
    // That 404 is counted as route="other".
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
  });

  it("admits the day's five requests, refuses the rest with 429 and those without a key with 401", async () => {
    const api = client(server.url, key);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await api("/v1/pets")).status);
    for (let i = 0; i < 2; i++) statuses.push((await client(server.url)("/v1/pets")).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429, 401, 401]);
  });

  it("counts in Prometheus exactly the requests made, by status", async () => {
    const byStatus = 'sum by (status) (petstore_http_requests_total{job="petstore",route="/v1/pets",method="GET"})';
    // Prometheus scrapes every second: until a scrape after the last request, it counts fewer.
    const sent = { "200": 5, "401": 2, "429": 3 };
    let counted = {};
    await waitFor(async () => isDeepStrictEqual((counted = await totals(base, byStatus, "status")), sent), 20_000, {
      every: 250,
      what: () => `Prometheus to count ${JSON.stringify(sent)}, last ${JSON.stringify(counted)}`,
    });
  }, 30_000);

  it("counts the 429s by plan and the 401s", async () => {
    expect(await totals(base, 'petstore_rate_limit_refusals_total{job="petstore"}', "plan")).toEqual({ free: 3 });
    expect(await totals(base, 'petstore_unauthorized_total{job="petstore"}', "job")).toEqual({ petstore: 2 });
  });

  it("times every request by route, the 404 as other", async () => {
    expect(
      await totals(base, 'sum by (route) (petstore_http_request_duration_seconds_count{job="petstore"})', "route"),
    ).toEqual({ "/v1/pets": 10, other: 1 });
  });

  it("is up, with its version and at least one committed limiter batch", async () => {
    expect(await totals(base, 'up{job="petstore"}', "job")).toEqual({ petstore: 1 });
    // Every admitted or refused request was counted by a limiter write: at least one batch committed.
    const batches = await totals(base, 'petstore_libsql_commit_seconds_count{job="petstore"}', "job");
    expect(batches.petstore).toBeGreaterThanOrEqual(1);
    expect(await totals(base, 'petstore_build_info{job="petstore"}', "version")).toEqual({ "1.0.0": 1 });
  });

  it("stops on SIGTERM with code 0, Prometheus and the server alike", async () => {
    expect(await stopProcess(prometheus!, "SIGTERM")).toEqual({ code: 0, signal: null });
    prometheus = undefined;
    expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });
  });
});
