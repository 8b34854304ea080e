import { bindingBucket } from "../http/answer-headers.js";
import type { Settings } from "../options.js";
import type { CallerLimits } from "../plans.js";
import type { Decision } from "../ports.js";
import type { Bucket } from "./choose-bucket.js";

/**
 * What the limiter decided, as the answer reports it: the decision with the binding bucket's
 * windows (the hit's own, or a shared one's: see `bindingBucket`), and that bucket's limits.
 */
export interface Limited {
  decision: Decision;
  limits: CallerLimits;
}

/**
 * Stage 3, limit: the request counts against its bucket and the buckets it shares (its
 * account's), in one atomic hit of the limiter, decided at the limiter's instant (its store's
 * clock), not this server's. The answer reports the binding bucket.
 */
export function limitStage(settings: Pick<Settings, "limiter" | "ban">): (bucket: Bucket) => Promise<Limited> {
  const { limiter, ban } = settings;
  return async ({ name, limits, shared }) => {
    if (!shared) return { decision: await limiter.hit({ bucket: name, windows: limits.windows, ban }), limits };
    const decision = await limiter.hit({
      bucket: name,
      windows: limits.windows,
      ban,
      shared: shared.map((s) => ({ bucket: s.name, windows: s.limits.windows })),
    });
    const binding = bindingBucket(decision);
    if (binding === 0) return { decision, limits };
    return { decision: { ...decision, windows: decision.shared![binding - 1]! }, limits: shared[binding - 1]!.limits };
  };
}
