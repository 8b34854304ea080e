import { bindingBucket } from "../http/answer-headers.js";
import type { Settings } from "../options.js";
import type { CallerLimits } from "../plans.js";
import type { Decision } from "../ports.js";
import type { Bucket } from "./choose-bucket.js";

/**
 * What the limiter decided, as the answer reports it: the decision with the binding bucket's
 * windows (the hit's own, or a shared one's: see `bindingBucket`), and that bucket's limits.
 */
interface Limited {
  decision: Decision;
  limits: CallerLimits;
}

/** Stage 3: a request's hit; `instant` estimates the limiter's instant before the next one. */
export interface Limit {
  (bucket: Bucket): Promise<Limited>;
  /**
   * The limiter's instant now, as this server estimates it before a hit: the last decision's
   * `now` plus the monotonic time elapsed since that hit was sent (before any decision, this
   * server's clock). Sent before the store decided, the hit makes this an upper bound of the
   * store's instant, off by that hit's round trip at most, unless the store's clock moved
   * ahead of the monotonic one since (a step; this server's skew before its first decision).
   */
  instant(): number;
}

/**
 * Stage 3, limit: the request counts against its bucket and the buckets it shares (its
 * account's), in one atomic hit of the limiter, decided at the limiter's instant (its store's
 * clock), not this server's. The answer reports the binding bucket.
 */
export function limitStage(settings: Pick<Settings, "limiter" | "ban" | "clock" | "monotonicClock">): Limit {
  const { limiter, ban, clock, monotonicClock } = settings;
  /** The last decision's instant, and the monotonic clock when its hit was sent; none before the first decision. */
  let decided: number | undefined;
  let sent = 0;
  const hit = ({ name, limits, shared }: Bucket): Promise<Decision> =>
    shared
      ? limiter.hit({
          bucket: name,
          windows: limits.windows,
          ban,
          shared: shared.map((s) => ({ bucket: s.name, windows: s.limits.windows })),
        })
      : limiter.hit({ bucket: name, windows: limits.windows, ban });
  const limit = async (bucket: Bucket): Promise<Limited> => {
    const sending = monotonicClock();
    const decision = await hit(bucket);
    decided = decision.now;
    sent = sending;
    const { limits, shared } = bucket;
    const binding = shared ? bindingBucket(decision) : 0;
    if (binding === 0) return { decision, limits };
    return { decision: { ...decision, windows: decision.shared![binding - 1]! }, limits: shared![binding - 1]!.limits };
  };
  return Object.assign(limit, {
    instant: () => (decided === undefined ? clock() : decided + (monotonicClock() - sent)),
  });
}
