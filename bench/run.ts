/**
 * `npm run bench`: every server variant under the same load, back to back, for several
 * rounds; requests/s, p50/p99 latency, RSS (after each run, and after the POST run with
 * every variant holding the same number of pets), the access-log lines this project's servers
 * wrote, answers by status, each variant's ratio to the baseline measured in the same round
 * (before and after the others, which run in an order rotated each round), the median over
 * rounds, how noisy the machine was, the binary's cold start, and the issues' targets checked
 * against those medians. See bench/README.md.
 *
 *   npm run bench -- [--rounds 5] [--duration 5] [--warmup 1] [--connections 64]
 *                    [--variants baseline,hono,...] [--load wrk|autocannon] [--cold-starts 10]
 */
import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readSync, rmSync, truncateSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BINARY, ensureBinary } from "../test/e2e/_binary.js";
import { type LoadRequest, type LoadResult, loadGenerator } from "./_load.js";
import { canPin, freePort, httpGet, pinned, rssBytes, start, stop } from "./_processes.js";
import { median, table } from "./_stats.js";
import { stopEngines } from "./_engines.js";
import { petsStored, type RunningVariant, type Variant, VARIANTS } from "./_variants.js";

const USAGE = "npm run bench -- [--rounds N] [--duration S] [--warmup S] [--connections N] [--variants a,b] [--load wrk|autocannon] [--cold-starts N]";

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    duration: { type: "string", default: "5" },
    warmup: { type: "string", default: "1" },
    connections: { type: "string", default: "64" },
    variants: { type: "string", default: VARIANTS.map((v) => v.name).join(",") },
    load: { type: "string" },
    "cold-starts": { type: "string", default: "10" },
    help: { type: "boolean", default: false },
  },
});
if (flags.help) {
  console.log(USAGE);
  process.exit(0);
}

function whole(name: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    console.error(`bench: --${name} must be a whole number from ${min} to ${max}, not '${text}'\n${USAGE}`);
    process.exit(2);
  }
  return value;
}
const rounds = whole("rounds", flags.rounds, 1, 100);
const duration = whole("duration", flags.duration, 1, 600);
const warmup = whole("warmup", flags.warmup, 0, 60);
const connections = whole("connections", flags.connections, 1, 10_000);
const coldStarts = whole("cold-starts", flags["cold-starts"], 0, 100);
const chosen = flags.variants.split(",").map((name) => name.trim());
const unknown = chosen.filter((name) => !VARIANTS.some((v) => v.name === name));
if (unknown.length > 0 || (flags.load !== undefined && flags.load !== "wrk" && flags.load !== "autocannon")) {
  console.error(`bench: unknown ${unknown.length > 0 ? `variant ${unknown.join(", ")} (known: ${VARIANTS.map((v) => v.name).join(", ")})` : `--load ${flags.load}`}\n${USAGE}`);
  process.exit(2);
}
const variants = VARIANTS.filter((v) => chosen.includes(v.name));

const ENDPOINTS = ["GET /v1/pets", "POST /v1/pets"] as const;
type Endpoint = (typeof ENDPOINTS)[number];
const POST_BODY = JSON.stringify({ name: "Rex", categoryId: 1 });

interface Measurement extends LoadResult {
  round: number;
  variant: string;
  ours: boolean;
  endpoint: Endpoint;
  rssBytes: number | undefined;
  /** This project's servers: access-log lines written during the measured run. */
  logLines?: number;
  /** POST, not the baseline: pets held and RSS once every variant of the round holds as many. */
  equalPets?: { pets: number; rssBytes: number | undefined };
  /** The baseline only: its req/s before and after the other variants of the round. */
  baselineRuns?: [number, number];
}

function version(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "ignore"] }).split("\n")[0]!.trim();
  } catch {
    return "unknown";
  }
}

const load = loadGenerator(flags.load as "wrk" | "autocannon" | undefined);
const root = join(import.meta.dirname, "..");
console.log("Pet Store benchmark");
console.log(`  machine:     ${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}, Linux ${version("uname", ["-r"])}`);
console.log(`  checkout:    ${version("git", ["-C", root, "describe", "--always", "--dirty"])}; load average before starting: ${version("cat", ["/proc/loadavg"])}`);
console.log(`  runtimes:    bun ${version(join(root, "node_modules/.bin/bun"), ["--version"])}, ${version(join(root, "node_modules/.bin/deno"), ["--version"])}, node ${process.version}`);
console.log(`  load:        ${load.name}, ${connections} connections, ${warmup} s warm-up then ${duration} s per measurement, ${rounds} round(s)`);
if (load.name === "autocannon") {
  console.log("               (wrk is not installed: autocannon, in Node, may saturate before a fast server does. Install wrk: sudo apt-get install wrk)");
}
console.log(`  pinning:     ${canPin ? "servers on CPU 0 (taskset -c 0), load generator on CPU 1 (taskset -c 1)" : "none (taskset not found): servers and load share every core"}`);
console.log(`  variants:    ${variants.map((v) => v.name).join(", ")}`);
console.log("  access log:  this project's servers write theirs, as by default (one JSON line per request on stdout, appended to a file");
console.log("               here and counted: 'log/req'); the peers and the baseline write none");

if (variants.some((v) => v.name.startsWith("binary")) || coldStarts > 0) {
  console.log(`  binary:      ${BINARY} (building it when missing or older than its sources...)`);
  ensureBinary();
}

const fmt = (value: number, digits: number) => value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
/** Two decimals, three below 0.1 so that small ratios still differ. */
const ratioText = (ratio: number | undefined) => (ratio === undefined ? "-" : fmt(ratio, ratio < 0.1 ? 3 : 2));
const mib = (bytes: number | undefined) => (bytes === undefined ? "-" : fmt(bytes / 2 ** 20, 1));

function request(url: string, key: string, endpoint: Endpoint): LoadRequest {
  return endpoint === "GET /v1/pets" ? { url: `${url}/v1/pets`, method: "GET", key } : { url: `${url}/v1/pets`, method: "POST", key, body: POST_BODY };
}

const measurements: Measurement[] = [];

function ratioTo(baseline: Measurement | undefined, m: Measurement): number | undefined {
  return baseline === undefined ? undefined : m.perSecond / baseline.perSecond;
}

function roundTable(round: number): string {
  const rows = [["variant", "endpoint", "req/s", "p50 ms", "p99 ms", "RSS MiB", "RSS =pets", "log/req", "non-2xx", "429", "× baseline", "note"]];
  for (const endpoint of ENDPOINTS) {
    const rank = (m: Measurement) => variants.findIndex((v) => v.name === m.variant);
    const inRound = measurements.filter((m) => m.round === round && m.endpoint === endpoint).sort((a, b) => rank(a) - rank(b));
    const baseline = inRound.find((m) => m.variant === "baseline");
    for (const m of inRound) {
      const ratio = ratioTo(baseline, m);
      const flagged = m.ours && (m.other > 0 || m.socketErrors > 0) ? " !!" : "";
      rows.push([
        m.variant,
        endpoint,
        fmt(m.perSecond, 0),
        fmt(m.p50Ms, 2),
        fmt(m.p99Ms, 2),
        mib(m.rssBytes),
        mib(m.equalPets?.rssBytes),
        m.logLines === undefined ? "-" : fmt(m.logLines / m.requests, 2),
        `${fmt(m.other + m.socketErrors, 0)}${flagged}`,
        fmt(m.limited, 0),
        ratioText(ratio),
        m.baselineRuns ? `runs before/after: ${m.baselineRuns.map((x) => fmt(x, 0)).join(" / ")}` : "",
      ]);
    }
  }
  return table(rows);
}

/** The median of the values that were measured; undefined when none was. */
function medianOf(values: (number | undefined)[]): number | undefined {
  const known = values.filter((x) => x !== undefined);
  return known.length === 0 ? undefined : median(known);
}

/** Per variant and endpoint: medians over rounds, the ratio being the median of each round's own ratio. */
function summary() {
  return variants.flatMap((variant) =>
    ENDPOINTS.map((endpoint) => {
      const own = measurements.filter((m) => m.variant === variant.name && m.endpoint === endpoint);
      const ratios = own.flatMap((m) => {
        const ratio = ratioTo(measurements.find((b) => b.round === m.round && b.endpoint === endpoint && b.variant === "baseline"), m);
        return ratio === undefined ? [] : [ratio];
      });
      return {
        variant: variant.name,
        ours: variant.ours,
        endpoint,
        rounds: own.length,
        perSecond: median(own.map((m) => m.perSecond)),
        p50Ms: median(own.map((m) => m.p50Ms)),
        p99Ms: median(own.map((m) => m.p99Ms)),
        rss: medianOf(own.map((m) => m.rssBytes)),
        rssEqualPets: medianOf(own.map((m) => m.equalPets?.rssBytes)),
        logPerRequest: medianOf(own.map((m) => (m.logLines === undefined ? undefined : m.logLines / m.requests))),
        unexpected: own.reduce((sum, m) => sum + m.other + m.socketErrors, 0),
        limited: own.reduce((sum, m) => sum + m.limited, 0),
        ratio: ratios.length > 0 ? median(ratios) : undefined,
        ratios,
      };
    }),
  );
}

/** Lines in `file` (its newlines), read in chunks. */
function countLines(file: string): number {
  const fd = openSync(file, "r");
  try {
    const chunk = Buffer.allocUnsafe(1 << 20);
    let lines = 0;
    for (let read; (read = readSync(fd, chunk, 0, chunk.length, null)) > 0; ) {
      for (let at = chunk.indexOf(10); at !== -1 && at < read; at = chunk.indexOf(10, at + 1)) lines++;
    }
    return lines;
  } finally {
    closeSync(fd);
  }
}

/** One load run (after its warm-up) against a running server, printed as it completes. */
async function measureOnce(round: number, variant: Variant, server: RunningVariant, endpoint: Endpoint, note = ""): Promise<Measurement> {
  const req = request(server.url, server.key, endpoint);
  if (warmup > 0) await load.run(req, warmup, connections);
  // The server appends to its log (O_APPEND): emptied here, it holds only this run's lines.
  if (server.logFile !== undefined) truncateSync(server.logFile);
  const result = await load.run(req, duration, connections);
  const m: Measurement = { ...result, round, variant: variant.name, ours: variant.ours, endpoint, rssBytes: rssBytes(server.started.pid) };
  if (server.logFile !== undefined) {
    // The binary writes the lines of a turn of its event loop at the end of that turn.
    await new Promise((resolve) => setTimeout(resolve, 50));
    m.logLines = countLines(server.logFile);
    truncateSync(server.logFile);
  }
  console.log(
    `  round ${round}  ${(variant.name + note).padEnd(21)} ${endpoint.padEnd(14)} ${fmt(m.perSecond, 0).padStart(8)} req/s  p50 ${fmt(m.p50Ms, 2)} ms  p99 ${fmt(m.p99Ms, 2)} ms  RSS ${mib(m.rssBytes)} MiB` +
      (m.logLines === undefined ? "" : `  log ${fmt(m.logLines / m.requests, 2)} lines/req`) +
      (m.other + m.socketErrors + m.limited > 0 ? `  non-2xx ${m.other} (+${m.socketErrors} socket errors), 429 ${m.limited}` : ""),
  );
  return m;
}

/**
 * After a round's POST runs every variant but the baseline holds a different number of pets
 * (the faster, the more): each is sent more POSTs until it holds as many as the one holding
 * most, then its RSS is read, so that memory compares at equal data.
 */
async function equalPets(round: number, servers: Map<string, RunningVariant>): Promise<void> {
  const storing = variants.filter((v) => v.storage === "memory");
  if (storing.length === 0) return;
  const held = new Map<string, number>();
  for (const v of storing) held.set(v.name, await petsStored(servers.get(v.name)!));
  const target = Math.max(...held.values());
  for (const v of storing) {
    const server = servers.get(v.name)!;
    const m = measurements.find((x) => x.round === round && x.variant === v.name && x.endpoint === "POST /v1/pets")!;
    let pets = held.get(v.name)!;
    // The time each top-up may take comes from this round's rate (wrk waits it out even when
    // done early); a slower top-up is followed by another.
    for (let attempt = 0; attempt < 5 && target - pets > connections; attempt++) {
      const missing = target - pets;
      const seconds = Math.ceil((1.2 * missing) / Math.max(m.perSecond, 100)) + 1;
      const topUp = await load.runCount(request(server.url, server.key, "POST /v1/pets"), missing, connections, seconds);
      // Counted with the POST run's answers, so that the defect fails the run like any other.
      m.other += topUp.other;
      m.socketErrors += topUp.socketErrors;
      pets = await petsStored(server);
    }
    m.equalPets = { pets, rssBytes: rssBytes(server.started.pid) };
    console.log(`  round ${round}  ${v.name.padEnd(21)} ${fmt(pets, 0)} pets held (${fmt(pets - held.get(v.name)!, 0)} added)  RSS ${mib(m.equalPets.rssBytes)} MiB`);
  }
}

/** The baseline's two runs of a round as one: means of the rates and latencies, counts summed. */
function bracketed(before: Measurement, after: Measurement): Measurement {
  return {
    ...after,
    requests: before.requests + after.requests,
    perSecond: (before.perSecond + after.perSecond) / 2,
    p50Ms: (before.p50Ms + after.p50Ms) / 2,
    p99Ms: (before.p99Ms + after.p99Ms) / 2,
    ok: before.ok + after.ok,
    limited: before.limited + after.limited,
    other: before.other + after.other,
    socketErrors: before.socketErrors + after.socketErrors,
    baselineRuns: [before.perSecond, after.perSecond],
  };
}

/**
 * One round: every server started (idle ones cost nothing), then per endpoint the baseline,
 * the other variants in an order rotated each round, and the baseline again: its reference
 * is the mean of both runs, so that drift in the machine's load weighs on no variant alone.
 */
async function measureRound(round: number): Promise<void> {
  const servers = new Map<string, RunningVariant>();
  try {
    for (const variant of variants) servers.set(variant.name, await variant.start(await freePort()));
    const baseline = variants.find((v) => v.name === "baseline");
    const others = variants.filter((v) => v !== baseline);
    const shift = others.length === 0 ? 0 : (round - 1) % others.length;
    const order = [...others.slice(shift), ...others.slice(0, shift)];
    for (const endpoint of ENDPOINTS) {
      const before = baseline && (await measureOnce(round, baseline, servers.get(baseline.name)!, endpoint, " (before)"));
      for (const variant of order) measurements.push(await measureOnce(round, variant, servers.get(variant.name)!, endpoint));
      if (baseline && before) {
        const after = await measureOnce(round, baseline, servers.get(baseline.name)!, endpoint, " (after)");
        measurements.push(bracketed(before, after));
      }
      if (endpoint === "POST /v1/pets") await equalPets(round, servers);
    }
  } finally {
    for (const server of servers.values()) await server.close();
  }
}

/** Exec to the first 200 from /healthz, `runs` times, on a database that exists (a restart) and on a new one. */
async function coldStart(runs: number): Promise<{ label: string; times: number[] }[]> {
  const dir = mkdtempSync(join(tmpdir(), "petstore-bench-cold-"));
  try {
    const results = [];
    for (const database of ["existing file database (a restart)", "new file database (migrations run)"] as const) {
      const times: number[] = [];
      for (let run = 0; run < runs; run++) {
        const db = `file:${join(dir, database.startsWith("new") ? `new-${run}.db` : "existing.db")}`;
        const port = await freePort();
        const began = process.hrtime.bigint();
        const started = start(pinned(0, [BINARY, "serve", "--host", "127.0.0.1", "--port", String(port), "--db", db]), { env: { PATH: process.env.PATH ?? "" }, cwd: dir });
        try {
          const deadline = Date.now() + 10_000;
          while ((await httpGet(`http://127.0.0.1:${port}/healthz`)).status !== 200) {
            if (started.child.exitCode !== null || Date.now() > deadline) throw new Error(`no 200 from /healthz within 10 s:\n${started.stderr.join("\n")}`);
          }
          times.push(Number(process.hrtime.bigint() - began) / 1e6);
        } finally {
          await stop(started);
        }
      }
      // The first "existing" run creates the database; later runs reopen it.
      results.push({ label: database, times: database.startsWith("existing") ? times.slice(1) : times });
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const began = Date.now();
for (let round = 1; round <= rounds; round++) {
  console.log(`\nRound ${round} of ${rounds}`);
  await measureRound(round);
  console.log(`\nRound ${round}: ratios to this round's baseline (the mean of its runs before and after the others)\n${roundTable(round)}`);
}

const rows = summary();
const equalCounts = measurements.flatMap((m) => (m.equalPets && m.variant === variants.find((v) => v.name !== "baseline")?.name ? [fmt(m.equalPets.pets, 0)] : []));
console.log(`\nMedian over ${rounds} round(s) (× baseline: the median of each round's own ratio)`);
console.log("  RSS MiB: right after the run. RSS =pets (POST): after every variant was brought to the same number of pets");
if (equalCounts.length > 0) console.log(`  (${equalCounts.join(", ")} by round, ±${connections}). log/req: access-log lines written per answer; '-': writes none.`);
console.log(
  table([
    ["variant", "endpoint", "req/s", "p50 ms", "p99 ms", "RSS MiB", "RSS =pets", "log/req", "non-2xx", "429", "× baseline", "each round"],
    ...rows.map((r) => [
      r.variant,
      r.endpoint,
      fmt(r.perSecond, 0),
      fmt(r.p50Ms, 2),
      fmt(r.p99Ms, 2),
      mib(r.rss),
      mib(r.rssEqualPets),
      r.logPerRequest === undefined ? "-" : fmt(r.logPerRequest, 2),
      fmt(r.unexpected, 0),
      fmt(r.limited, 0),
      ratioText(r.ratio),
      r.ratios.map(ratioText).join(" "),
    ]),
  ]),
);

let coldMedian: number | undefined;
if (coldStarts > 1) {
  console.log(`\nCold start of ${BINARY}: exec to the first 200 from GET /healthz, ${coldStarts} starts each (pinned like the servers)`);
  for (const { label, times } of await coldStart(coldStarts)) {
    const m = median(times);
    if (label.startsWith("existing")) coldMedian = m;
    console.log(`  ${label.padEnd(36)} median ${fmt(m, 1)} ms  (min ${fmt(Math.min(...times), 1)}, max ${fmt(Math.max(...times), 1)}; ${times.length} starts)`);
  }
}

/** How far the baseline moved within and across rounds: the noise every ratio carries. */
function noiseReport(): string[] {
  const lines: string[] = [];
  for (const endpoint of ENDPOINTS) {
    const runs = measurements.filter((m) => m.endpoint === endpoint && m.baselineRuns !== undefined);
    if (runs.length === 0) continue;
    const all = runs.flatMap((m) => m.baselineRuns!);
    const within = Math.max(...runs.map((m) => Math.abs(m.baselineRuns![0] - m.baselineRuns![1]) / m.perSecond));
    const across = Math.max(...all) / Math.min(...all) - 1;
    lines.push(
      `  baseline ${endpoint}: ${fmt(Math.min(...all), 0)} to ${fmt(Math.max(...all), 0)} req/s over ${all.length} runs; ` +
        `largest change within a round ${fmt(100 * within, 0)}%${within > 0.15 ? "  <- NOISY: something else is using these cores; prefer more rounds or a quiet machine" : ""}`,
    );
  }
  return lines;
}
const noise = noiseReport();
if (noise.length > 0) console.log(`\nNoise\n${noise.join("\n")}`);

const find = (variant: string, endpoint: Endpoint) => rows.find((r) => r.variant === variant && r.endpoint === endpoint);

/** Issue 18's table: the binary on PostgreSQL (+ Redis) over its hand-built peer, medians of this run. */
{
  const pairs = [["binary-postgres", "hono-rlf-postgres"], ["binary-postgres-redis", "hono-rlf-redis"]] as const;
  const lines = [["binary / peer", "endpoint", "req/s ×", "p50 ms (binary / peer)", "p99 ms (binary / peer)", "RSS × (after the run)"]];
  for (const [ours, peer] of pairs) {
    for (const endpoint of ENDPOINTS) {
      const a = find(ours, endpoint);
      const b = find(peer, endpoint);
      if (!a || !b) continue;
      const rss = a.rss !== undefined && b.rss !== undefined ? ratioText(a.rss / b.rss) : "-";
      lines.push([`${ours} / ${peer}`, endpoint, ratioText(a.perSecond / b.perSecond), `${fmt(a.p50Ms, 2)} / ${fmt(b.p50Ms, 2)}`, `${fmt(a.p99Ms, 2)} / ${fmt(b.p99Ms, 2)}`, rss]);
    }
  }
  if (lines.length > 1) console.log(`\nThe binary against the hand-built peer on the same PostgreSQL and Redis (issue 18)\n${table(lines)}`);
}

const verdicts: [string, boolean | undefined, string][] = [];
{
  const r = (x: number | undefined) => (x === undefined ? "not measured" : ratioText(x));
  const ms = (x: number | undefined) => (x === undefined ? "not measured" : `${fmt(x, 2)} ms`);
  const mb = (x: number | undefined) => (x === undefined ? "not measured" : `${mib(x)} MiB`);
  const atLeast = (x: number | undefined, min: number | undefined) => (x === undefined || min === undefined ? undefined : x >= min);
  const memoryGet = find("binary-memory", "GET /v1/pets");
  const memoryPost = find("binary-memory", "POST /v1/pets");
  const elysiaGet = find("elysia", "GET /v1/pets");
  const elysiaPost = find("elysia", "POST /v1/pets");
  const fileGet = find("binary-file", "GET /v1/pets");
  const filePost = find("binary-file", "POST /v1/pets");
  verdicts.push(["binary-memory GET ≥ elysia (× baseline)", atLeast(memoryGet?.ratio, elysiaGet?.ratio), `${r(memoryGet?.ratio)} vs ${r(elysiaGet?.ratio)}`]);
  verdicts.push(["binary-memory POST ≥ elysia (× baseline)", atLeast(memoryPost?.ratio, elysiaPost?.ratio), `${r(memoryPost?.ratio)} vs ${r(elysiaPost?.ratio)}`]);
  verdicts.push([
    "binary-memory POST p99 ≤ 1.5 × elysia's",
    atLeast(elysiaPost && 1.5 * elysiaPost.p99Ms, memoryPost?.p99Ms),
    `${ms(memoryPost?.p99Ms)} vs ${ms(elysiaPost?.p99Ms)}`,
  ]);
  verdicts.push([
    "binary-memory RSS after POST ≤ 1.5 × elysia's (same pets)",
    atLeast(elysiaPost?.rssEqualPets && 1.5 * elysiaPost.rssEqualPets, memoryPost?.rssEqualPets),
    `${mb(memoryPost?.rssEqualPets)} vs ${mb(elysiaPost?.rssEqualPets)}`,
  ]);
  verdicts.push(["binary-file GET ≥ 0.60 × baseline", atLeast(fileGet?.ratio, 0.6), r(fileGet?.ratio)]);
  verdicts.push(["binary-file POST ≥ 0.32 × baseline", atLeast(filePost?.ratio, 0.32), r(filePost?.ratio)]);
  verdicts.push(["cold start < 150 ms (median, restart; issue 6)", coldMedian === undefined ? undefined : coldMedian < 150, coldMedian === undefined ? "not measured" : `${fmt(coldMedian, 1)} ms`]);
  const unexpected = rows.filter((row) => row.ours && row.unexpected > 0);
  verdicts.push([
    "no non-2xx but intended 429s (this project's variants)",
    rows.some((row) => row.ours) ? unexpected.length === 0 : undefined,
    unexpected.length === 0 ? "none" : unexpected.map((row) => `${row.variant} ${row.endpoint}: ${row.unexpected}`).join("; "),
  ]);
  const unlogged = rows.filter((row) => row.ours && row.logPerRequest !== undefined && row.logPerRequest < 0.99);
  verdicts.push([
    "this project's servers wrote their access log",
    rows.some((row) => row.ours) ? unlogged.length === 0 : undefined,
    unlogged.length === 0 ? "one line per answer" : unlogged.map((row) => `${row.variant} ${row.endpoint}: ${fmt(row.logPerRequest!, 2)} per answer`).join("; "),
  ]);
  // Issue 18: the binary on PostgreSQL (and + Redis) against the hand-built peer on the same servers.
  for (const [ours, peer] of [["binary-postgres", "hono-rlf-postgres"], ["binary-postgres-redis", "hono-rlf-redis"]] as const) {
    for (const endpoint of ENDPOINTS) {
      const a = find(ours, endpoint);
      const b = find(peer, endpoint);
      const verb = endpoint.split(" ")[0];
      const ratio = a && b ? a.perSecond / b.perSecond : undefined;
      verdicts.push([`${ours} ${verb} req/s ≥ ${peer}'s (issue 18)`, atLeast(ratio, 1), ratio === undefined ? "not measured" : `${ratioText(ratio)} × (${fmt(a!.perSecond, 0)} vs ${fmt(b!.perSecond, 0)})`]);
      verdicts.push([`${ours} ${verb} p99 ≤ ${peer}'s (issue 18)`, atLeast(b?.p99Ms, a?.p99Ms), `${ms(a?.p99Ms)} vs ${ms(b?.p99Ms)}`]);
    }
  }
}
console.log(`\nTargets (issues 15 and 18; median of ${rounds} round(s)${rounds < 5 ? ": fewer than the 5 the targets ask for, indicative only" : ""})`);
console.log(table([["target", "met", "measured"], ...verdicts.map(([target, met, measured]) => [target, met === undefined ? "-" : met ? "yes" : "NO", measured])]));
console.log("  Not checked here: that every 201 of the file database is durable (test/e2e/durability.test.ts, a crash test).");

const defects = rows.filter((row) => row.ours && row.unexpected > 0);
if (defects.length > 0) {
  console.error("\n" + "!".repeat(78));
  console.error("!! WARNING: this project's servers answered with errors other than intended 429s:");
  for (const row of defects) console.error(`!!   ${row.variant} ${row.endpoint}: ${row.unexpected} non-2xx answers or socket errors`);
  console.error("!! The throughput figures above count those answers: they are not valid.");
  console.error("!".repeat(78));
  process.exitCode = 1;
}
await stopEngines();
console.log(`\nDone in ${fmt((Date.now() - began) / 1000, 0)} s.`);
