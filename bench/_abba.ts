/**
 * Two ways of serving the same request, compared by CPU time per request in this process: run
 * in interleaved batches (A B B A, then B A A B, and so on), so that a drift of the machine
 * weighs on both alike. CPU time (`process.cpuUsage`, every thread) rather than wall time: the
 * machine's other processes disturb it far less.
 */
import { median } from "./_stats.js";

/** One request, its answer read. */
export type Call = () => Promise<void>;

/** One side of the comparison: its call, and what it does after each batch (a flush) if anything. */
interface Side {
  call: Call;
  after?: () => Promise<void>;
}

export interface Interleaved {
  /** CPU per request of `a` over `b` (median over the groups): 1.02 is 2 % more. */
  ratio: number;
  /** CPU microseconds per request of each (medians over the groups). */
  aMicros: number;
  bMicros: number;
  groups: number;
}

const BATCH_MS = 200;
const WARMUP_CALLS = 3_000;

/** CPU microseconds this process has used (user + system, every thread). */
const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/** One batch of calls for about BATCH_MS: its CPU time and its number of calls. */
async function batch({ call, after }: Side): Promise<{ cpu: number; calls: number }> {
  const cpu = cpuMicros();
  const started = performance.now();
  let calls = 0;
  while (performance.now() - started < BATCH_MS) {
    for (let i = 0; i < 32; i++) await call();
    calls += 32;
  }
  await after?.();
  return { cpu: cpuMicros() - cpu, calls };
}

/** `a` against `b` for about `seconds` after a warm-up of both; at least one group. */
async function interleaved(a: Side, b: Side, seconds: number): Promise<Interleaved> {
  for (let i = 0; i < WARMUP_CALLS; i++) {
    await a.call();
    await b.call();
  }
  const ratios: number[] = [];
  const perCall = { a: [] as number[], b: [] as number[] };
  const deadline = performance.now() + seconds * 1000;
  while (performance.now() < deadline || ratios.length === 0) {
    // A B B A, then B A A B: neither goes first, nor follows itself, more often.
    const abba = ratios.length % 2 === 0;
    const [first, second] = abba ? [a, b] : [b, a];
    const [w, x, y, z] = [await batch(first), await batch(second), await batch(second), await batch(first)];
    const [as, bs] = abba
      ? [
          [w, z],
          [x, y],
        ]
      : [
          [x, y],
          [w, z],
        ];
    const perCallOf = ([one, two]: { cpu: number; calls: number }[]) =>
      (one!.cpu + two!.cpu) / (one!.calls + two!.calls);
    const [aMicros, bMicros] = [perCallOf(as), perCallOf(bs)];
    ratios.push(aMicros / bMicros);
    perCall.a.push(aMicros);
    perCall.b.push(bMicros);
  }
  return { ratio: median(ratios), aMicros: median(perCall.a), bMicros: median(perCall.b), groups: ratios.length };
}

/** One case (`memory GET /v1/pets`...): `a` against `b` on it. */
export interface CaseCost extends Interleaved {
  case: string;
}

/** GET and POST through one petstore, and what it does after each batch (a flush) if anything. */
export interface Calls {
  get: Call;
  post: Call;
  after?: () => Promise<void>;
}

/** `a` against `b` on GET, then on POST, each for about `seconds`: the cases `<where> GET /v1/pets` and POST. */
export async function getAndPost(where: string, a: Calls, b: Calls, seconds: number): Promise<CaseCost[]> {
  const side = (calls: Calls, endpoint: "get" | "post"): Side => ({
    call: calls[endpoint],
    ...(calls.after && { after: calls.after }),
  });
  const results: CaseCost[] = [];
  for (const endpoint of ["get", "post"] as const) {
    const cost = await interleaved(side(a, endpoint), side(b, endpoint), seconds);
    results.push({ case: `${where} ${endpoint.toUpperCase()} /v1/pets`, ...cost });
  }
  return results;
}

/** The interval between batches, for the scripts' help text. */
export const BATCH_DESCRIPTION = `ABBA and BAAB batches of ${BATCH_MS} ms`;
