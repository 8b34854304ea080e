import { pathnameOf } from "../http/pathname.js";
import { requestIdOf } from "../http/request-id.js";

/** What is known of a request when it arrives, before any stage: read once, never changed. */
export interface Arrival {
  requestId: string;
  pathname: string;
  /**
   * Unix ms of this request by this server's clock (`clock`): for the headers of a 503 before
   * the limiter decided; every shared instant is the limiter's `Decision.now`.
   */
  now: number;
  /** The monotonic clock (`monotonicClock`) when the request arrived: what this process measures from it. */
  started: number;
}

/** The request's id (its own `X-Request-Id` when usable), its path and its time by each clock. */
export function arrive(request: Request, now: number, started: number): Arrival {
  return { requestId: requestIdOf(request), pathname: pathnameOf(request.url), now, started };
}
