import { outcomeWithin } from "./_outcome-within.js";

/** How long a storage failure that a request met keeps `/healthz` at 503. */
const FAILURE_MEMORY_MS = 5_000;
/** A check that has not answered by then reports storage as down. */
const CHECK_TIMEOUT_MS = 2_000;

/** Whether the API can serve reads and writes now: what `/healthz` answers. */
export interface Health {
  /** A request met a storage failure (the API answered 503). */
  storageFailed(): void;
  /** Undefined when the API can serve now; else the reason, in a few words. */
  problem(): Promise<string | undefined>;
  /**
   * What a healthy API serves without, or what is off beside it, in a few words (a rate
   * limiter failing open, this server's clock off from its store's); shown in `/healthz`'s 200
   * body. Undefined when nothing is amiss.
   */
  notice(): Promise<string | undefined>;
}

function reasonOf(error: unknown): string {
  return error instanceof Error && error.message !== "" ? error.message : "storage is unavailable";
}

/**
 * Healthy when `check` (a write through the same path as the API's, see `Storage.check`)
 * succeeds within 2 s and no request met a storage failure in the last 5 s: a disk that is
 * full for creates but not for the check's one small row still shows. `degraded` is a check
 * whose failure the API serves through (a limiter failing open): its reason is a notice, as
 * is what `remarks` says (a clock off from the store's).
 */
export function health(
  check: () => Promise<unknown>,
  /** Monotonic, ms: how long a failure is remembered is this process's own. */
  clock: () => number = () => performance.now(),
  degraded?: () => Promise<unknown>,
  remarks?: () => string | undefined,
): Health {
  let failedAt = Number.NEGATIVE_INFINITY;
  return {
    storageFailed() {
      failedAt = clock();
    },
    async problem() {
      let failure = "";
      const outcome = await outcomeWithin(
        check().catch((error: unknown) => {
          failure = reasonOf(error);
          throw error;
        }),
        CHECK_TIMEOUT_MS,
      );
      if (outcome === "timeout") return `storage did not answer within ${CHECK_TIMEOUT_MS / 1000} s`;
      if (outcome === "rejected") return failure;
      const since = clock() - failedAt;
      if (since < FAILURE_MEMORY_MS) return `a request met a storage failure ${(since / 1000).toFixed(1)} s ago`;
      return undefined;
    },
    async notice() {
      const failing =
        degraded &&
        (await degraded().then(
          () => undefined,
          (error: unknown) => `${reasonOf(error)}; requests are admitted without rate limits`,
        ));
      const notes = [failing, remarks?.()].filter((note) => note !== undefined);
      return notes.length > 0 ? notes.join("; ") : undefined;
    },
  };
}
