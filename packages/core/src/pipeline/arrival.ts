import { pathnameOf } from "../http/pathname.js";
import { requestIdOf } from "../http/request-id.js";

/** What is known of a request when it arrives, before any stage: read once, never changed. */
export interface Arrival {
  requestId: string;
  pathname: string;
  /**
   * Unix ms of this request by this server's clock (`clock`): for what is this server's own
   * (how long a verified key stays cached); every shared instant is the limiter's `Decision.now`.
   */
  now: number;
  /** `performance.now()` when the request arrived. */
  started: number;
}

/** The request's id (its own `X-Request-Id` when usable), its path and its time. */
export function arrive(request: Request, now: number): Arrival {
  return { requestId: requestIdOf(request), pathname: pathnameOf(request.url), now, started: performance.now() };
}
