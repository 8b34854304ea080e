/**
 * The load generator: `wrk` when it is installed, else `autocannon` from node_modules, pinned
 * to the second core. Both report the same numbers: requests/s, p50 and p99 latency, and
 * answers counted as 2xx, 429 and anything else.
 */
import { execFile, execFileSync } from "node:child_process";
import { join } from "node:path";
import { pinned, track } from "./_processes.js";

const ROOT = join(import.meta.dirname, "..");
/** The core the load generator runs on; servers get core 0. */
const LOAD_CORE = 1;

export interface LoadRequest {
  url: string;
  method: "GET" | "POST";
  /** Sent as `Authorization: Bearer <key>`. */
  key?: string;
  /** A JSON body, sent with `Content-Type: application/json`. */
  body?: string;
}

export interface LoadResult {
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers by status: 2xx, 429, and everything else. */
  ok: number;
  limited: number;
  other: number;
  /** Connect, read, write errors and timeouts. */
  socketErrors: number;
}

export interface LoadGenerator {
  name: string;
  /** Sends `request` over `connections` keep-alive connections for `seconds`. */
  run(request: LoadRequest, seconds: number, connections: number): Promise<LoadResult>;
  /**
   * Sends `request` until `count` answers came (give or take one per connection) or `seconds`
   * passed. wrk stops sending at `count` but only returns after `seconds`: size them together.
   */
  runCount(request: LoadRequest, count: number, connections: number, seconds: number): Promise<LoadResult>;
}

function run(command: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string> {
  const [executable, ...args] = command;
  return new Promise((resolve, reject) => {
    track(
      execFile(executable!, args, { env, timeout: timeoutMs, maxBuffer: 16 * 2 ** 20 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`${executable} failed: ${error.message}\n${stderr}`));
        else resolve(stdout);
      }),
    );
  });
}

/** wrk for `seconds`, or until `count` answers came (0: no count). */
async function runWrk(request: LoadRequest, seconds: number, connections: number, count: number): Promise<LoadResult> {
  // The request comes through the environment (bench/wrk.lua reads it): no key on argv.
  const env = {
    ...process.env,
    BENCH_METHOD: request.method,
    BENCH_KEY: request.key ?? "",
    BENCH_BODY: request.body ?? "",
    BENCH_COUNT: String(count),
  };
  const command = pinned(LOAD_CORE, [
    "wrk",
    "-t1",
    `-c${connections}`,
    `-d${seconds}s`,
    "--timeout",
    "10s",
    "-s",
    join(ROOT, "bench/wrk.lua"),
    request.url,
  ]);
  const stdout = await run(command, env, (seconds + 30) * 1000);
  const line = stdout.split("\n").find((l) => l.startsWith("BENCH_RESULT "));
  if (!line) throw new Error(`wrk printed no result:\n${stdout}`);
  const r = JSON.parse(line.slice("BENCH_RESULT ".length)) as Record<string, number>;
  return {
    requests: r.requests!,
    perSecond: r.requests! / (r.durationUs! / 1e6),
    p50Ms: r.p50Us! / 1000,
    p99Ms: r.p99Us! / 1000,
    ok: r.ok!,
    limited: r.limited!,
    other: r.other!,
    socketErrors: r.socketErrors!,
  };
}

const wrk: LoadGenerator = {
  name: "wrk",
  run: (request, seconds, connections) => runWrk(request, seconds, connections, 0),
  runCount: (request, count, connections, seconds) => runWrk(request, seconds, connections, count),
};

interface AutocannonResult {
  requests: { total: number };
  duration: number;
  latency: { p50: number; p99: number };
  statusCodeStats: Record<string, { count: number }>;
  errors: number;
  timeouts: number;
}

/** autocannon for `seconds`, or for `amount` requests (then `seconds` only bounds the wait). */
async function runAutocannon(
  request: LoadRequest,
  seconds: number,
  connections: number,
  amount: number,
): Promise<LoadResult> {
  const headers = request.body === undefined ? [] : ["-H", "content-type=application/json", "-b", request.body];
  // autocannon takes headers only on argv: the key shows in `ps` for the run (a throwaway key).
  if (request.key !== undefined) headers.push("-H", `authorization=Bearer ${request.key}`);
  const command = pinned(LOAD_CORE, [
    process.execPath,
    join(ROOT, "node_modules/autocannon/autocannon.js"),
    "-c",
    String(connections),
    ...(amount > 0 ? ["-a", String(amount)] : ["-d", String(seconds)]),
    "-m",
    request.method,
    ...headers,
    "-j",
    request.url,
  ]);
  const stdout = await run(command, process.env, (seconds + 30) * 1000);
  const result = JSON.parse(stdout.trim().split("\n").at(-1)!) as AutocannonResult;
  let ok = 0;
  let limited = 0;
  let other = 0;
  for (const [status, { count }] of Object.entries(result.statusCodeStats)) {
    if (status.startsWith("2")) ok += count;
    else if (status === "429") limited += count;
    else other += count;
  }
  return {
    requests: result.requests.total,
    perSecond: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    ok,
    limited,
    other,
    socketErrors: result.errors + result.timeouts,
  };
}

const autocannon: LoadGenerator = {
  name: "autocannon",
  run: (request, seconds, connections) => runAutocannon(request, seconds, connections, 0),
  runCount: (request, count, connections, seconds) => runAutocannon(request, seconds, connections, count),
};

/** True when `wrk` runs here. */
function hasWrk(): boolean {
  try {
    execFileSync("wrk", ["--version"], { stdio: "ignore", timeout: 5_000 });
    return true;
  } catch (error) {
    // wrk --version prints its banner and exits 1: only "not found" means it is missing.
    return (error as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

/** `wrk` when installed (or when `prefer` says so), else `autocannon`. */
export function loadGenerator(prefer?: "wrk" | "autocannon"): LoadGenerator {
  if (prefer === "autocannon") return autocannon;
  if (hasWrk()) return wrk;
  if (prefer === "wrk") throw new Error("wrk is not installed (Debian/Ubuntu: sudo apt-get install wrk)");
  return autocannon;
}
