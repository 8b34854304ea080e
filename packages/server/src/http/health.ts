import { outcomeWithin } from "./_outcome-within.js";

/** How long a storage failure that a request met keeps `/healthz` at 503, unless a request like it succeeds first. */
const FAILURE_MEMORY_MS = 5_000;
/** A check that has not answered by then reports storage as down. */
const CHECK_TIMEOUT_MS = 2_000;

/** Whether the API can serve reads and writes now: what `/healthz` answers. */
export interface Health {
  /** A request met a storage failure (the API answered 503); `what` it asked, bounded (`GET /v1/pets`). */
  storageFailed(what: string): void;
  /** A request succeeded (2xx): whatever failure the last request like it met is over. */
  storageServed(what: string): void;
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
 * succeeds within 2 s and no kind of request (a method on a route) last met a storage failure,
 * within 5 s: a disk that is full for creates but not for the check's one small row still
 * shows, and a failure is over as soon as a request like it succeeds (the API serves again),
 * never lingering after the fault. `degraded` is a check whose failure the API serves through
 * (a limiter failing open): its reason is a notice, as is what `remarks` says (a clock off
 * from the store's).
 */
export function health(
  check: () => Promise<unknown>,
  /** Monotonic, ms: how long a failure is remembered is this process's own. */
  clock: () => number = () => performance.now(),
  degraded?: () => Promise<unknown>,
  remarks?: () => string | undefined,
): Health {
  // The kinds of request whose last answer met a storage failure, and when; a few at most (methods × routes).
  const failures = new Map<string, number>();
  return {
    storageFailed(what) {
      failures.set(what, clock());
    },
    storageServed(what) {
      failures.delete(what);
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
      const now = clock();
      let latest: [string, number] | undefined;
      for (const [what, at] of failures) {
        if (now - at >= FAILURE_MEMORY_MS) failures.delete(what);
        else if (latest === undefined || at > latest[1]) latest = [what, at];
      }
      if (latest === undefined) return undefined;
      const [what, at] = latest;
      return `${what} met a storage failure ${((now - at) / 1000).toFixed(1)} s ago and has not succeeded since (said until one does, ${FAILURE_MEMORY_MS / 1000} s at most)`;
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
