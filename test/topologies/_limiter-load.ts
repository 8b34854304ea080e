import { client } from "../e2e/_http.js";

/** What one key's requests were answered while the load ran. */
export interface Tally {
  /** 200s. */
  admitted: number;
  /** 429s (rate_limited or temporarily_banned). */
  refused: number;
  /** 503s, each checked to carry the contract's headers. */
  unavailable: number;
  /** The slowest answer, ms. */
  slowestMs: number;
  /** When (performance.now()) the last 503 and the first 200 after `mark()` came. */
  lastUnavailableAt?: number;
  firstAdmittedAfterMark?: number;
}

/** One key on one server under load: `workers` requests at a time, each answer checked. */
export interface LoadTarget {
  name: string;
  url: string;
  key: string;
  workers: number;
}

/** Every answer must come before this, or the request is aborted and the test fails: a hang. */
const REQUEST_TIMEOUT_MS = 5_000;

/**
 * GETs /v1/pets with each target's key, `workers` at a time per target, until `stop()`: the
 * load under which a store fails over. Each answer must be a 200, a 429 or a 503 with
 * `Retry-After` and the rate-limit headers (anything else, or no answer within 5 s, is kept in
 * `problems`); the tallies count them per target. `mark()` notes the instant a fault begins, so
 * that the first 200 after it is known.
 */
export function limiterLoad(targets: LoadTarget[]) {
  const tallies = new Map<string, Tally>(
    targets.map((target) => [target.name, { admitted: 0, refused: 0, unavailable: 0, slowestMs: 0 }]),
  );
  const problems: string[] = [];
  let stopping = false;
  let markedAt: number | undefined;

  async function worker(target: LoadTarget): Promise<void> {
    const api = client(target.url, target.key);
    const tally = tallies.get(target.name)!;
    while (!stopping) {
      const began = performance.now();
      let response: Response;
      try {
        response = await api("/v1/pets?limit=1", { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        await response.arrayBuffer();
      } catch (error) {
        problems.push(`${target.name}: no answer within ${REQUEST_TIMEOUT_MS} ms (${String(error)})`);
        continue;
      }
      const now = performance.now();
      tally.slowestMs = Math.max(tally.slowestMs, now - began);
      if (response.status === 200) {
        tally.admitted++;
        if (markedAt !== undefined && tally.firstAdmittedAfterMark === undefined) tally.firstAdmittedAfterMark = now;
      } else if (response.status === 429) {
        tally.refused++;
      } else if (response.status === 503) {
        tally.unavailable++;
        tally.lastUnavailableAt = now;
        const retryAfter = Number(response.headers.get("retry-after"));
        if (
          !(retryAfter >= 1) ||
          response.headers.get("x-ratelimit-limit") === null ||
          response.headers.get("x-ratelimit-remaining") === null
        ) {
          problems.push(`${target.name}: a 503 without Retry-After or the rate-limit headers`);
        }
        // A client told to come back later does not spin: a fast 503 is not a request a second.
        await new Promise((resolve) => setTimeout(resolve, 20));
      } else {
        problems.push(`${target.name}: answered ${response.status}`);
      }
    }
  }

  const running = targets.flatMap((target) => Array.from({ length: target.workers }, () => worker(target)));
  return {
    tallies,
    problems,
    tally: (name: string) => tallies.get(name)!,
    mark: () => {
      markedAt = performance.now();
      return markedAt;
    },
    stop: async () => {
      stopping = true;
      await Promise.all(running);
    },
  };
}
