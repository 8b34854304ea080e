/**
 * `npm run bench`: every server variant under the same load, back to back, for several
 * rounds; requests/s, p50/p99 latency, RSS (after each run, and after the POST run with
 * every variant holding the same number of pets), the access-log lines this project's servers
 * wrote, answers by status, each variant's ratio to the baseline measured in the same round
 * (before and after the others, which run in an order rotated each round), the median over
 * rounds, how noisy the machine was, the binary's cold start, and the issues' targets checked
 * against those medians, and the code before the newest per-request work (bench/_before.ts)
 * against today's, in process and over HTTP. See bench/README.md.
 *
 * Every run length (`--duration 3,10`) has its own rounds, tables and targets: issue 23 asks
 * the memory variants to hold their rate in 10 s runs too, where they hold about 400,000 pets.
 *
 *   npm run bench -- [--duration 3,10] [--rounds 3,2] [--warmup 1] [--connections 64]
 *                    [--variants baseline,hono,...|all] [--long-variants baseline,hono,...]
 *                    [--load wrk|autocannon] [--cold-starts 10] [--usage-cost 4]
 *
 * `--usage-cost S`: seconds per case of the two in-process A/Bs (bench/new-work-cost.ts for
 * target 1, bench/usage-cost.ts for issue 36); 0 skips them.
 */
import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readSync, rmSync, truncateSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BINARY, ensureBinary } from "../test/e2e/_binary.js";
import { type LoadRequest, type LoadResult, loadGenerator } from "./_load.js";
import { BEFORE_COMMIT, beforeBinary } from "./_before.js";
import { canPin, cpuMs, freePort, httpGet, pinned, rssBytes, start, stop } from "./_processes.js";
import { median, table } from "./_stats.js";
import { stopEngines } from "./_engines.js";
import { petsStored, type RunningVariant, type Variant, VARIANTS } from "./_variants.js";
import type { NewWorkCost } from "./new-work-cost.js";
import type { UsageCost } from "./usage-cost.js";

const USAGE =
  "npm run bench -- [--duration S,S...] [--rounds N,N...] [--warmup S] [--connections N] [--variants a,b|all] [--long-variants a,b] [--load wrk|autocannon] [--cold-starts N] [--usage-cost S]";

/** Run by default: all but the PostgreSQL and Redis variants (issue 18's), which need those servers installed. */
const DEFAULT_VARIANTS = VARIANTS.filter((v) => v.storage !== "postgres").map((v) => v.name);
/** Measured in every run length after the first: what the long-run targets compare (issue 23 §1). */
const LONG_VARIANTS = ["baseline", "hono", "elysia", "elysia-log", "binary-memory"];
/** Today's binary and the one of BEFORE_COMMIT on the same storage: target 1 over HTTP. */
const BEFORE_PAIRS = [
  ["binary-memory", "binary-memory-before", "memory"],
  ["binary-file", "binary-file-before", "file"],
] as const;
/** Cold starts target 6 judges: its best is the best of this many. */
const COLD_STARTS_JUDGED = 9;

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "3,2" },
    duration: { type: "string", default: "3,10" },
    warmup: { type: "string", default: "1" },
    connections: { type: "string", default: "64" },
    variants: { type: "string", default: DEFAULT_VARIANTS.join(",") },
    "long-variants": { type: "string", default: LONG_VARIANTS.join(",") },
    load: { type: "string" },
    "cold-starts": { type: "string", default: "10" },
    "usage-cost": { type: "string", default: "4" },
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
const durations = flags.duration.split(",").map((text) => whole("duration", text.trim(), 1, 600));
const roundCounts = flags.rounds.split(",").map((text) => whole("rounds", text.trim(), 1, 100));
if (roundCounts.length !== 1 && roundCounts.length !== durations.length) {
  console.error(
    `bench: --rounds takes one count, or one per --duration (${durations.length}), not '${flags.rounds}'\n${USAGE}`,
  );
  process.exit(2);
}
/** Each run length with its number of rounds. */
const lengths = durations.map((seconds, i) => ({ seconds, rounds: roundCounts[i] ?? roundCounts[0]! }));
const warmup = whole("warmup", flags.warmup, 0, 60);
const connections = whole("connections", flags.connections, 1, 10_000);
const coldStarts = whole("cold-starts", flags["cold-starts"], 0, 100);
const usageCostSeconds = whole("usage-cost", flags["usage-cost"], 0, 600);
const chosen =
  flags.variants === "all" ? VARIANTS.map((v) => v.name) : flags.variants.split(",").map((name) => name.trim());
const chosenLong = flags["long-variants"].split(",").map((name) => name.trim());
const unknown = [...chosen, ...chosenLong].filter((name) => !VARIANTS.some((v) => v.name === name));
if (unknown.length > 0 || (flags.load !== undefined && flags.load !== "wrk" && flags.load !== "autocannon")) {
  console.error(
    `bench: unknown ${unknown.length > 0 ? `variant ${unknown.join(", ")} (known: ${VARIANTS.map((v) => v.name).join(", ")})` : `--load ${flags.load}`}\n${USAGE}`,
  );
  process.exit(2);
}
const variants = VARIANTS.filter((v) => chosen.includes(v.name));
/** The variants measured in runs of `seconds`: all chosen in the first run length, the long ones after. */
const variantsFor = (seconds: number) =>
  seconds === durations[0] ? variants : variants.filter((v) => chosenLong.includes(v.name));

const ENDPOINTS = ["GET /v1/pets", "POST /v1/pets"] as const;
type Endpoint = (typeof ENDPOINTS)[number];
const POST_BODY = JSON.stringify({ name: "Rex", categoryId: 1 });

interface Measurement extends LoadResult {
  /** Numbered across run lengths, so that a round names one set of runs. */
  round: number;
  /** The run length, seconds. */
  seconds: number;
  variant: string;
  ours: boolean;
  endpoint: Endpoint;
  rssBytes: number | undefined;
  /** Access-log lines written during the measured run (this project's servers and `elysia-log`). */
  logLines?: number;
  /** The server's CPU time per answer during the measured run, µs (from /proc). */
  cpuMicros: number | undefined;
  /** POST, not the baseline: pets held and RSS once every variant of the round holds as many. */
  equalPets?: { pets: number; rssBytes: number | undefined };
  /** The baseline only: its req/s before and after the other variants of the round. */
  baselineRuns?: [number, number];
}

function version(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "ignore"] })
      .split("\n")[0]!
      .trim();
  } catch {
    return "unknown";
  }
}

const load = loadGenerator(flags.load as "wrk" | "autocannon" | undefined);
const root = join(import.meta.dirname, "..");
console.log("Pet Store benchmark");
console.log(
  `  machine:     ${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}, Linux ${version("uname", ["-r"])}`,
);
console.log(
  `  checkout:    ${version("git", ["-C", root, "describe", "--always", "--dirty"])}; load average before starting: ${version("cat", ["/proc/loadavg"])}`,
);
console.log(
  `  runtimes:    bun ${version(join(root, "node_modules/.bin/bun"), ["--version"])}, ${version(join(root, "node_modules/.bin/deno"), ["--version"])}, node ${process.version}`,
);
console.log(
  `  load:        ${load.name}, ${connections} connections, ${warmup} s warm-up then ${lengths.map((l) => `${l.seconds} s per measurement for ${l.rounds} round(s)`).join(", then ")}`,
);
if (load.name === "autocannon") {
  console.log(
    "               (wrk is not installed: autocannon, in Node, may saturate before a fast server does. Install wrk: sudo apt-get install wrk)",
  );
}
console.log(
  `  pinning:     ${canPin ? "servers on CPU 0 (taskset -c 0), load generator on CPU 1 (taskset -c 1)" : "none (taskset not found): servers and load share every core"}`,
);
console.log(`  variants:    ${variants.map((v) => v.name).join(", ")}`);
if (lengths.length > 1)
  console.log(
    `               in the ${lengths
      .slice(1)
      .map((l) => `${l.seconds} s`)
      .join(", ")} runs: ${variantsFor(lengths[1]!.seconds)
      .map((v) => v.name)
      .join(", ")}`,
  );
console.log(
  "  access log:  this project's servers write theirs, as by default (one JSON line per request on stdout, appended to a file",
);
console.log("               here and counted: 'log/req'); the peers and the baseline write none");

if (variants.some((v) => v.name.startsWith("binary")) || coldStarts > 0) {
  console.log(`  binary:      ${BINARY} (building it when missing or older than its sources...)`);
  ensureBinary();
}
if (variants.some((v) => v.name.endsWith("-before"))) {
  console.log(
    `  before:      the code of ${BEFORE_COMMIT} (the '-before' variants; extracting and compiling it once...)`,
  );
  console.log(`               ${beforeBinary()}`);
}

const fmt = (value: number, digits: number) =>
  value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
/** Two decimals, three below 0.1 so that small ratios still differ. */
const ratioText = (ratio: number | undefined) => (ratio === undefined ? "-" : fmt(ratio, ratio < 0.1 ? 3 : 2));
const mib = (bytes: number | undefined) => (bytes === undefined ? "-" : fmt(bytes / 2 ** 20, 1));

function request(url: string, key: string, endpoint: Endpoint): LoadRequest {
  return endpoint === "GET /v1/pets"
    ? { url: `${url}/v1/pets`, method: "GET", key }
    : { url: `${url}/v1/pets`, method: "POST", key, body: POST_BODY };
}

const measurements: Measurement[] = [];

function ratioTo(baseline: Measurement | undefined, m: Measurement): number | undefined {
  return baseline === undefined ? undefined : m.perSecond / baseline.perSecond;
}

function roundTable(round: number): string {
  const rows = [
    [
      "variant",
      "endpoint",
      "req/s",
      "p50 ms",
      "p99 ms",
      "RSS MiB",
      "RSS =pets",
      "CPU µs/req",
      "log/req",
      "non-2xx",
      "429",
      "× baseline",
      "note",
    ],
  ];
  for (const endpoint of ENDPOINTS) {
    const rank = (m: Measurement) => variants.findIndex((v) => v.name === m.variant);
    const inRound = measurements
      .filter((m) => m.round === round && m.endpoint === endpoint)
      .sort((a, b) => rank(a) - rank(b));
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
        m.cpuMicros === undefined ? "-" : fmt(m.cpuMicros, 1),
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

/** Per variant and endpoint in runs of `seconds`: medians over rounds, the ratio being the median of each round's own ratio. */
function summary(seconds: number) {
  return variantsFor(seconds).flatMap((variant) =>
    ENDPOINTS.map((endpoint) => {
      const own = measurements.filter(
        (m) => m.seconds === seconds && m.variant === variant.name && m.endpoint === endpoint,
      );
      const ratios = own.flatMap((m) => {
        const ratio = ratioTo(
          measurements.find((b) => b.round === m.round && b.endpoint === endpoint && b.variant === "baseline"),
          m,
        );
        return ratio === undefined ? [] : [ratio];
      });
      return {
        seconds,
        variant: variant.name,
        ours: variant.ours,
        endpoint,
        rounds: own.length,
        perSecond: median(own.map((m) => m.perSecond)),
        p50Ms: median(own.map((m) => m.p50Ms)),
        p99Ms: median(own.map((m) => m.p99Ms)),
        rss: medianOf(own.map((m) => m.rssBytes)),
        rssEqualPets: medianOf(own.map((m) => m.equalPets?.rssBytes)),
        cpuMicros: medianOf(own.map((m) => m.cpuMicros)),
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
    for (let read: number; (read = readSync(fd, chunk, 0, chunk.length, null)) > 0; ) {
      for (let at = chunk.indexOf(10); at !== -1 && at < read; at = chunk.indexOf(10, at + 1)) lines++;
    }
    return lines;
  } finally {
    closeSync(fd);
  }
}

/** One load run (after its warm-up) against a running server, printed as it completes. */
async function measureOnce(
  round: number,
  seconds: number,
  variant: Variant,
  server: RunningVariant,
  endpoint: Endpoint,
  note = "",
): Promise<Measurement> {
  const req = request(server.url, server.key, endpoint);
  if (warmup > 0) await load.run(req, warmup, connections);
  // The server appends to its log (O_APPEND): emptied here, it holds only this run's lines.
  if (server.logFile !== undefined) truncateSync(server.logFile);
  const cpuBefore = cpuMs(server.started.pid);
  const result = await load.run(req, seconds, connections);
  const cpuAfter = cpuMs(server.started.pid);
  const m: Measurement = {
    ...result,
    round,
    seconds,
    variant: variant.name,
    ours: variant.ours,
    endpoint,
    rssBytes: rssBytes(server.started.pid),
    cpuMicros:
      cpuBefore === undefined || cpuAfter === undefined || result.requests === 0
        ? undefined
        : ((cpuAfter - cpuBefore) * 1000) / result.requests,
  };
  if (server.logFile !== undefined) {
    // The binary writes the lines of a turn of its event loop at the end of that turn.
    await new Promise((resolve) => setTimeout(resolve, 50));
    m.logLines = countLines(server.logFile);
    truncateSync(server.logFile);
  }
  console.log(
    `  round ${round}  ${(variant.name + note).padEnd(21)} ${endpoint.padEnd(14)} ${fmt(m.perSecond, 0).padStart(8)} req/s  p50 ${fmt(m.p50Ms, 2)} ms  p99 ${fmt(m.p99Ms, 2)} ms  RSS ${mib(m.rssBytes)} MiB` +
      (m.cpuMicros === undefined ? "" : `  CPU ${fmt(m.cpuMicros, 1)} µs/req`) +
      (m.logLines === undefined ? "" : `  log ${fmt(m.logLines / m.requests, 2)} lines/req`) +
      (m.other + m.socketErrors + m.limited > 0
        ? `  non-2xx ${m.other} (+${m.socketErrors} socket errors), 429 ${m.limited}`
        : ""),
  );
  return m;
}

/**
 * After a round's POST runs every variant but the baseline holds a different number of pets
 * (the faster, the more): each is sent more POSTs until it holds as many as the one holding
 * most, then its RSS is read, so that memory compares at equal data.
 */
async function equalPets(
  round: number,
  roundVariants: readonly Variant[],
  servers: Map<string, RunningVariant>,
): Promise<void> {
  const storing = roundVariants.filter((v) => v.storage === "memory");
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
      const topUp = await load.runCount(
        request(server.url, server.key, "POST /v1/pets"),
        missing,
        connections,
        seconds,
      );
      // Counted with the POST run's answers, so that the defect fails the run like any other.
      m.other += topUp.other;
      m.socketErrors += topUp.socketErrors;
      pets = await petsStored(server);
    }
    m.equalPets = { pets, rssBytes: rssBytes(server.started.pid) };
    console.log(
      `  round ${round}  ${v.name.padEnd(21)} ${fmt(pets, 0)} pets held (${fmt(pets - held.get(v.name)!, 0)} added)  RSS ${mib(m.equalPets.rssBytes)} MiB`,
    );
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
    cpuMicros:
      before.cpuMicros === undefined || after.cpuMicros === undefined
        ? undefined
        : (before.cpuMicros + after.cpuMicros) / 2,
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
async function measureRound(round: number, seconds: number): Promise<void> {
  const servers = new Map<string, RunningVariant>();
  const roundVariants = variantsFor(seconds);
  try {
    for (const variant of roundVariants) servers.set(variant.name, await variant.start(await freePort()));
    const baseline = roundVariants.find((v) => v.name === "baseline");
    const others = roundVariants.filter((v) => v !== baseline);
    const shift = others.length === 0 ? 0 : (round - 1) % others.length;
    const order = [...others.slice(shift), ...others.slice(0, shift)];
    for (const endpoint of ENDPOINTS) {
      const before =
        baseline && (await measureOnce(round, seconds, baseline, servers.get(baseline.name)!, endpoint, " (before)"));
      for (const variant of order)
        measurements.push(await measureOnce(round, seconds, variant, servers.get(variant.name)!, endpoint));
      if (baseline && before) {
        const after = await measureOnce(round, seconds, baseline, servers.get(baseline.name)!, endpoint, " (after)");
        measurements.push(bracketed(before, after));
      }
      if (endpoint === "POST /v1/pets") await equalPets(round, roundVariants, servers);
    }
  } finally {
    for (const server of servers.values()) await server.close();
  }
}

/**
 * Exec to the first 200 from /healthz, `runs` times, on a database that exists (a restart: one
 * start that creates it goes first, not counted) and on a new one.
 */
async function coldStart(runs: number): Promise<{ label: string; times: number[] }[]> {
  const dir = mkdtempSync(join(tmpdir(), "petstore-bench-cold-"));
  try {
    const results = [];
    for (const database of ["existing file database (a restart)", "new file database (migrations run)"] as const) {
      const times: number[] = [];
      const creating = database.startsWith("existing") ? 1 : 0;
      for (let run = 0; run < runs + creating; run++) {
        const db = `file:${join(dir, database.startsWith("new") ? `new-${run}.db` : "existing.db")}`;
        const port = await freePort();
        const began = process.hrtime.bigint();
        const started = start(pinned(0, [BINARY, "serve", "--host", "127.0.0.1", "--port", String(port), "--db", db]), {
          env: { PATH: process.env.PATH ?? "" },
          cwd: dir,
        });
        try {
          const deadline = Date.now() + 10_000;
          while ((await httpGet(`http://127.0.0.1:${port}/healthz`)).status !== 200) {
            if (started.child.exitCode !== null || Date.now() > deadline)
              throw new Error(`no 200 from /healthz within 10 s:\n${started.stderr.join("\n")}`);
          }
          times.push(Number(process.hrtime.bigint() - began) / 1e6);
        } finally {
          await stop(started);
        }
      }
      results.push({ label: database, times: times.slice(creating) });
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const began = Date.now();
let round = 0;
for (const length of lengths) {
  for (let nth = 1; nth <= length.rounds; nth++) {
    round++;
    console.log(`\nRound ${nth} of ${length.rounds}, ${length.seconds} s runs`);
    await measureRound(round, length.seconds);
    console.log(
      `\nRound ${nth} of the ${length.seconds} s runs: ratios to this round's baseline (the mean of its runs before and after the others)\n${roundTable(round)}`,
    );
  }
}

const rowsBy = new Map(lengths.map((length) => [length.seconds, summary(length.seconds)]));
for (const length of lengths) {
  const rows = rowsBy.get(length.seconds)!;
  const firstMemory = variantsFor(length.seconds).find((v) => v.storage === "memory")?.name;
  const equalCounts = measurements.flatMap((m) =>
    m.seconds === length.seconds && m.equalPets && m.variant === firstMemory ? [fmt(m.equalPets.pets, 0)] : [],
  );
  console.log(
    `\n${length.seconds} s runs: median over ${length.rounds} round(s) (× baseline: the median of each round's own ratio)`,
  );
  console.log(
    "  RSS MiB: right after the run. RSS =pets (POST): after every in-memory variant was brought to the same number of pets",
  );
  if (equalCounts.length > 0)
    console.log(
      `  (${equalCounts.join(", ")} by round, ±${connections}). log/req: access-log lines written per answer; '-': writes none.`,
    );
  console.log(
    table([
      [
        "variant",
        "endpoint",
        "req/s",
        "p50 ms",
        "p99 ms",
        "RSS MiB",
        "RSS =pets",
        "CPU µs/req",
        "log/req",
        "non-2xx",
        "429",
        "× baseline",
        "each round",
      ],
      ...rows.map((r) => [
        r.variant,
        r.endpoint,
        fmt(r.perSecond, 0),
        fmt(r.p50Ms, 2),
        fmt(r.p99Ms, 2),
        mib(r.rss),
        mib(r.rssEqualPets),
        r.cpuMicros === undefined ? "-" : fmt(r.cpuMicros, 1),
        r.logPerRequest === undefined ? "-" : fmt(r.logPerRequest, 2),
        fmt(r.unexpected, 0),
        fmt(r.limited, 0),
        ratioText(r.ratio),
        r.ratios.map(ratioText).join(" "),
      ]),
    ]),
  );
}

/** The restarts on an existing database: target 6. */
let restarts: number[] | undefined;
if (coldStarts > 1) {
  console.log(
    `\nCold start of ${BINARY}: exec to the first 200 from GET /healthz, ${coldStarts} starts each (pinned like the servers)`,
  );
  for (const { label, times } of await coldStart(coldStarts)) {
    if (label.startsWith("existing")) restarts = times;
    console.log(
      `  ${label.padEnd(36)} median ${fmt(median(times), 1)} ms  (min ${fmt(Math.min(...times), 1)}, max ${fmt(Math.max(...times), 1)}; ${times.length} starts)`,
    );
  }
}

/** One of the in-process A/Bs under Bun (`script`, `seconds` per case): its JSON line. */
function inProcess<T>(script: string, secondsPerCase: number): T | undefined {
  try {
    const output = execFileSync(
      join(root, "node_modules/.bin/bun"),
      [
        "--conditions=@petstore/source",
        join(import.meta.dirname, script),
        "--seconds",
        String(secondsPerCase),
        "--json",
      ],
      { encoding: "utf8", timeout: 120_000 + 8 * secondsPerCase * 1000, stdio: ["ignore", "pipe", "inherit"] },
    );
    return JSON.parse(output.trim().split("\n").at(-1)!) as T;
  } catch (error) {
    console.error(`bench: ${script} failed: ${(error as Error).message}`);
    return undefined;
  }
}
let newWorkCosts: NewWorkCost[] | undefined;
let usageCosts: UsageCost[] | undefined;
let countNs: number | undefined;
if (usageCostSeconds > 0) {
  console.log(
    `\nThe new work (target 1, bench/new-work-cost.ts): CPU per request in process, today's code over ${BEFORE_COMMIT}'s (Bun, ${usageCostSeconds} s per case, interleaved)`,
  );
  newWorkCosts = inProcess<{ cases: NewWorkCost[] }>("new-work-cost.ts", usageCostSeconds)?.cases;
  for (const cost of newWorkCosts ?? [])
    console.log(
      `  ${cost.case.padEnd(24)} ${fmt((cost.ratio - 1) * 100, 1).padStart(6)} %  (${fmt(cost.aMicros, 2)} vs ${fmt(cost.bMicros, 2)} µs, median of ${cost.groups} ABBA or BAAB groups)`,
    );
  console.log(
    `\nUsage recording (issue 36, bench/usage-cost.ts): CPU per request in process with it over without (Bun, ${usageCostSeconds} s per case, interleaved)`,
  );
  ({ cases: usageCosts, countNs } =
    inProcess<{ countNs: number; cases: UsageCost[] }>("usage-cost.ts", usageCostSeconds) ?? {});
  for (const cost of usageCosts ?? [])
    console.log(
      `  ${cost.case.padEnd(24)} ${fmt((cost.ratio - 1) * 100, 1).padStart(6)} %  (${fmt(cost.aMicros, 2)} vs ${fmt(cost.bMicros, 2)} µs, median of ${cost.groups} ABBA or BAAB groups)`,
    );
  if (countNs !== undefined) console.log(`  the count alone, without a request around it: ${fmt(countNs, 0)} ns`);
}

/** How far the baseline moved within and across rounds: the noise every ratio carries. */
function noiseReport(): string[] {
  const lines: string[] = [];
  for (const endpoint of ENDPOINTS) {
    const runs = measurements.filter((m) => m.endpoint === endpoint && m.baselineRuns !== undefined);
    if (runs.length === 0) continue;
    const all = runs.flatMap((m) => m.baselineRuns!);
    const within = Math.max(...runs.map((m) => Math.abs(m.baselineRuns![0] - m.baselineRuns![1]) / m.perSecond));
    const _across = Math.max(...all) / Math.min(...all) - 1;
    lines.push(
      `  baseline ${endpoint}: ${fmt(Math.min(...all), 0)} to ${fmt(Math.max(...all), 0)} req/s over ${all.length} runs; ` +
        `largest change within a round ${fmt(100 * within, 0)}%${within > 0.15 ? "  <- NOISY: something else is using these cores; prefer more rounds or a quiet machine" : ""}`,
    );
  }
  return lines;
}
const noise = noiseReport();
if (noise.length > 0) console.log(`\nNoise\n${noise.join("\n")}`);

const first = lengths[0]!.seconds;
const allRows = [...rowsBy.values()].flat();
const find = (variant: string, endpoint: Endpoint, seconds = first) =>
  rowsBy.get(seconds)?.find((r) => r.variant === variant && r.endpoint === endpoint);

/**
 * `a`'s req/s (or another `measure`) over `b`'s, both measured in the same round (runs of
 * `seconds`): the median over rounds; undefined unless both were measured.
 */
function pairRatio(
  a: string,
  b: string,
  endpoint: Endpoint,
  seconds = first,
  measure: (m: Measurement) => number | undefined = (m) => m.perSecond,
): number | undefined {
  const ratios = measurements.flatMap((m) => {
    if (m.seconds !== seconds || m.variant !== a || m.endpoint !== endpoint) return [];
    const other = measurements.find((x) => x.round === m.round && x.variant === b && x.endpoint === endpoint);
    const [x, y] = [measure(m), other && measure(other)];
    return x === undefined || y === undefined ? [] : [x / y];
  });
  return ratios.length === 0 ? undefined : median(ratios);
}

/** The binary against the peer that does the same work on the same storage and runtime. */
const PAIRS = [
  ["binary-memory", "elysia", "memory, Bun"],
  ["binary-memory", "elysia-log", "memory, Bun, access log"],
  ["binary-file", "elysia-sqlite", "file, Bun: bun:sqlite NORMAL"],
  ["binary-file", "elysia-sqlite-full", "file, Bun: bun:sqlite FULL"],
  ["binary-deno-memory", "hono-deno", "memory, Deno"],
  ["binary-deno", "hono-deno-file", "file, Deno: node:sqlite FULL"],
  ["binary-postgres", "hono-rlf-postgres", "PostgreSQL (issue 18)"],
  ["binary-postgres-redis", "hono-rlf-redis", "PostgreSQL + Redis (issue 18)"],
] as const;
{
  const lines = [
    [
      "binary / peer",
      "storage",
      "endpoint",
      "req/s × (same round)",
      "p50 ms (binary / peer)",
      "p99 ms (binary / peer)",
      "RSS × (after the run)",
    ],
  ];
  for (const [ours, peer, storage] of PAIRS) {
    for (const endpoint of ENDPOINTS) {
      const a = find(ours, endpoint);
      const b = find(peer, endpoint);
      if (!a || !b) continue;
      const rss = a.rss !== undefined && b.rss !== undefined ? ratioText(a.rss / b.rss) : "-";
      lines.push([
        `${ours} / ${peer}`,
        storage,
        endpoint,
        ratioText(pairRatio(ours, peer, endpoint)),
        `${fmt(a.p50Ms, 2)} / ${fmt(b.p50Ms, 2)}`,
        `${fmt(a.p99Ms, 2)} / ${fmt(b.p99Ms, 2)}`,
        rss,
      ]);
    }
  }
  if (lines.length > 1)
    console.log(
      `\nThe binary against the hand-built peer on the same storage and runtime (${first} s runs; medians over rounds)\n${table(lines)}`,
    );
}

/** A target or check: met, not met, or not measured (undefined), with the figures it was judged on. */
interface Verdict {
  target: string;
  met: boolean | undefined;
  figures: string;
}
/** Issue 40's targets, numbered as it numbers them. */
const targets: Verdict[] = [];
/** Earlier issues' targets that issue 40's do not replace, and what no change may trade away. */
const checks: Verdict[] = [];
{
  const r = (x: number | undefined) => (x === undefined ? "-" : ratioText(x));
  const ms = (x: number | undefined) => (x === undefined ? "-" : `${fmt(x, 2)} ms`);
  const mb = (x: number | undefined) => (x === undefined ? "not measured" : `${mib(x)} MiB`);
  const atLeast = (x: number | undefined, min: number | undefined) =>
    x === undefined || min === undefined ? undefined : x >= min;
  /** Not met when one check fails; not measured when none fails but one was not measured. */
  const every = (...results: (boolean | undefined)[]) =>
    results.some((c) => c === false) ? false : results.some((c) => c === undefined) ? undefined : true;
  const verb = (endpoint: Endpoint) => endpoint.split(" ")[0]!;
  /** A ratio of two variants' req/s in the same round. */
  const same = (x: number | undefined) => (x === undefined ? "not measured" : `${ratioText(x)} ×`);
  /** A ratio to judge against 1.03: three decimals. */
  const cost = (x: number | undefined) => (x === undefined ? "-" : fmt(x, 3));

  // 1. Today's CPU per request over BEFORE_COMMIT's: in process (bench/new-work-cost.ts) and over
  // HTTP (the server's CPU time from /proc, the two binaries measured in the same round).
  {
    const inProcess = BEFORE_PAIRS.flatMap(([, , where]) =>
      ENDPOINTS.map((endpoint) => ({
        label: `${where} ${verb(endpoint)}`,
        ratio: newWorkCosts?.find((c) => c.case === `${where} ${endpoint}`)?.ratio,
      })),
    );
    const overHttp = BEFORE_PAIRS.flatMap(([today, before, where]) =>
      ENDPOINTS.map((endpoint) => ({
        label: `${where} ${verb(endpoint)}`,
        ratio: pairRatio(today, before, endpoint, first, (m) => m.cpuMicros),
      })),
    );
    const listed = (cases: typeof inProcess) => cases.map(({ label, ratio }) => `${label} ${cost(ratio)}`).join(", ");
    targets.push({
      target: `1. the new work ≤ 3 % CPU per request against ${BEFORE_COMMIT} (today's over before's)`,
      met: every(...[...inProcess, ...overHttp].map(({ ratio }) => atLeast(1.03, ratio))),
      figures: `in process: ${listed(inProcess)}; over HTTP: ${listed(overHttp)}`,
    });
  }
  // 2. Memory ahead of Elysia writing the same access log, level with the plain one; POST p99.
  {
    const results: (boolean | undefined)[] = [];
    const figures: string[] = [];
    for (const { seconds } of lengths) {
      if (!find("binary-memory", "GET /v1/pets", seconds) || !find("elysia-log", "GET /v1/pets", seconds)) continue;
      const parts = ENDPOINTS.map((endpoint) => {
        const logging = pairRatio("binary-memory", "elysia-log", endpoint, seconds);
        const plain = pairRatio("binary-memory", "elysia", endpoint, seconds);
        results.push(atLeast(logging, 1.05), atLeast(plain, 1));
        return `${verb(endpoint)} ${r(logging)} × elysia-log, ${r(plain)} × elysia`;
      });
      const ours = find("binary-memory", "POST /v1/pets", seconds);
      const peer = find("elysia", "POST /v1/pets", seconds);
      results.push(atLeast(peer && 1.5 * peer.p99Ms, ours?.p99Ms));
      figures.push(
        `${seconds} s runs: ${parts.join("; ")}; POST p99 ${ms(ours?.p99Ms)} vs elysia's ${ms(peer?.p99Ms)}`,
      );
    }
    targets.push({
      target: "2. memory GET and POST ≥ 1.05 × elysia-log and ≥ elysia; POST p99 ≤ 1.5 × elysia's",
      met: results.length === 0 ? undefined : every(...results),
      figures: figures.length === 0 ? "not measured" : figures.join(" | "),
    });
  }
  // 3. The file database close to memory.
  {
    const get = pairRatio("binary-file", "binary-memory", "GET /v1/pets");
    const post = pairRatio("binary-file", "binary-memory", "POST /v1/pets");
    targets.push({
      target: "3. file POST ≥ 0.8 × memory POST, GET ≥ 0.9 × memory GET (same round)",
      met: every(atLeast(post, 0.8), atLeast(get, 0.9)),
      figures: `POST ${same(post)}, GET ${same(get)}`,
    });
  }
  // 4. PostgreSQL + Redis ahead of the hand-built peer; PostgreSQL alone keeps its lead.
  {
    const pairs = [
      ["binary-postgres-redis", "hono-rlf-redis", 1.05],
      ["binary-postgres", "hono-rlf-postgres", 1],
    ] as const;
    const results = pairs.flatMap(([ours, peer, min]) =>
      ENDPOINTS.map((endpoint) => ({ ours, endpoint, min, ratio: pairRatio(ours, peer, endpoint) })),
    );
    targets.push({
      target: "4. postgres-redis GET and POST ≥ 1.05 × hono-rlf-redis; postgres ≥ hono-rlf-postgres",
      met: every(...results.map(({ ratio, min }) => atLeast(ratio, min))),
      figures: results.map(({ ours, endpoint, ratio }) => `${ours} ${verb(endpoint)} ${r(ratio)} ×`).join(", "),
    });
  }
  // 5. Deno: the binary's source on Deno.serve level with Hono there.
  {
    const ratios = ENDPOINTS.map((endpoint) => ({
      endpoint,
      ratio: pairRatio("binary-deno-memory", "hono-deno", endpoint),
    }));
    targets.push({
      target: "5. Deno memory GET and POST ≥ hono-deno",
      met: every(...ratios.map(({ ratio }) => atLeast(ratio, 1))),
      figures: ratios.map(({ endpoint, ratio }) => `${verb(endpoint)} ${r(ratio)} ×`).join(", "),
    });
  }
  // 6. Cold start: `petstore serve` on an existing database to its first 200.
  {
    const enough = restarts !== undefined && restarts.length >= COLD_STARTS_JUDGED;
    const [middle, best] = restarts === undefined ? [] : [median(restarts), Math.min(...restarts)];
    targets.push({
      target: `6. cold start (restart): median ≤ 30 ms and best of ${COLD_STARTS_JUDGED} ≤ 20 ms`,
      met: enough ? middle! <= 30 && best! <= 20 : undefined,
      figures:
        restarts === undefined
          ? "not measured"
          : `median ${fmt(middle!, 1)} ms, best ${fmt(best!, 1)} ms of ${restarts.length} starts${enough ? "" : ` (${COLD_STARTS_JUDGED} needed: --cold-starts ${COLD_STARTS_JUDGED})`}`,
    });
  }

  // Earlier issues' targets that issue 40's do not replace.
  for (const { seconds } of lengths) {
    const get = find("binary-memory", "GET /v1/pets", seconds);
    checks.push({
      target: `memory GET ≥ 0.75 × baseline, ${seconds} s runs (issue 32)`,
      met: atLeast(get?.ratio, 0.75),
      figures: `${r(get?.ratio)} × baseline`,
    });
  }
  {
    const ours = find("binary-memory", "POST /v1/pets");
    const peer = find("elysia", "POST /v1/pets");
    checks.push({
      target: "memory RSS after POST ≤ 1.5 × elysia's, same pets (issue 15)",
      met: atLeast(peer?.rssEqualPets && 1.5 * peer.rssEqualPets, ours?.rssEqualPets),
      figures: `${mb(ours?.rssEqualPets)} vs ${mb(peer?.rssEqualPets)}`,
    });
  }
  for (const endpoint of ENDPOINTS) {
    const normal = pairRatio("binary-file", "elysia-sqlite", endpoint);
    const full = pairRatio("binary-file", "elysia-sqlite-full", endpoint);
    checks.push({
      target: `file ${verb(endpoint)} ahead of the bun:sqlite peers (issue 23)`,
      met: every(atLeast(normal, 1), atLeast(full, 1)),
      figures: `${same(normal)} the NORMAL one, ${same(full)} the FULL one`,
    });
  }
  for (const endpoint of ENDPOINTS) {
    const ratio = pairRatio("binary-deno", "hono-deno-file", endpoint);
    checks.push({
      target: `Deno file ${verb(endpoint)} ≥ hono-deno-file (issue 32)`,
      met: atLeast(ratio, 1),
      figures: same(ratio),
    });
  }
  checks.push({
    target: "usage recording ≤ 3 % CPU per request, memory and file (issue 36)",
    met: usageCosts === undefined ? undefined : usageCosts.every((c) => c.ratio <= 1.03),
    figures:
      usageCosts === undefined
        ? "not measured"
        : usageCosts.map((c) => `${c.case.split(" /")[0]} ${fmt((c.ratio - 1) * 100, 1)} %`).join(", "),
  });
  for (const [ours, peer] of [
    ["binary-postgres", "hono-rlf-postgres"],
    ["binary-postgres-redis", "hono-rlf-redis"],
  ] as const) {
    for (const endpoint of ENDPOINTS) {
      const a = find(ours, endpoint);
      const b = find(peer, endpoint);
      if (!a && !b) continue;
      checks.push({
        target: `${ours} ${verb(endpoint)} p99 ≤ 1.5 × ${peer}'s (issue 28)`,
        met: atLeast(b && 1.5 * b.p99Ms, a?.p99Ms),
        figures: `${ms(a?.p99Ms)} vs ${ms(b?.p99Ms)}`,
      });
    }
  }
  // Nothing traded away: answers and the access log.
  const unexpected = allRows.filter((row) => row.ours && row.unexpected > 0);
  checks.push({
    target: "no non-2xx but intended 429s (this project's variants)",
    met: allRows.some((row) => row.ours) ? unexpected.length === 0 : undefined,
    figures:
      unexpected.length === 0
        ? "none"
        : unexpected.map((row) => `${row.variant} ${row.endpoint} (${row.seconds} s): ${row.unexpected}`).join("; "),
  });
  const unlogged = allRows.filter((row) => row.logPerRequest !== undefined && row.logPerRequest < 0.99);
  checks.push({
    target: "one access-log line per answer (this project's servers and elysia-log)",
    met: allRows.some((row) => row.logPerRequest !== undefined) ? unlogged.length === 0 : undefined,
    figures:
      unlogged.length === 0
        ? "one line per answer"
        : unlogged.map((row) => `${row.variant} ${row.endpoint}: ${fmt(row.logPerRequest!, 2)} per answer`).join("; "),
  });
}
const fewRounds = lengths.some((l) => l.rounds < 3);
const width = Math.max(...[...targets, ...checks].map((v) => v.target.length));
const verdictLine = (label: string, { target, met, figures }: Verdict) =>
  `${label}: ${target.padEnd(width)}  ${(met === undefined ? "-" : met ? "met" : "NOT met").padEnd(7)}  (${figures})`;
console.log(
  `\nTargets (issue 40; medians over each run length's rounds${fewRounds ? "; a run length with fewer than 3 rounds is indicative only" : ""}; '-': a variant or run it needs was not measured)`,
);
for (const verdict of targets) console.log(verdictLine("target", verdict));
console.log("\nStill checked (earlier issues' targets, and what no change may trade away)");
for (const verdict of checks) console.log(verdictLine("check", verdict));
console.log(
  "  Not checked here: that every 201 of the file database is durable (test/e2e/durability.test.ts, a crash test),",
);
console.log("  nor that limits are exact across processes (test/multiprocess).");

const defects = allRows.filter((row) => row.ours && row.unexpected > 0);
if (defects.length > 0) {
  console.error(`\n${"!".repeat(78)}`);
  console.error("!! WARNING: this project's servers answered with errors other than intended 429s:");
  for (const row of defects)
    console.error(
      `!!   ${row.variant} ${row.endpoint} (${row.seconds} s runs): ${row.unexpected} non-2xx answers or socket errors`,
    );
  console.error("!! The throughput figures above count those answers: they are not valid.");
  console.error("!".repeat(78));
  process.exitCode = 1;
}
await stopEngines();
console.log(`\nDone in ${fmt((Date.now() - began) / 1000, 0)} s.`);
