import type { Settings } from "../options.js";
import type { Decision } from "../ports.js";
import type { Bucket } from "./choose-bucket.js";

/**
 * Stage 3, limit: the request counts against its bucket, in one atomic hit of the limiter,
 * decided at the limiter's instant (its store's clock), not this server's.
 */
export function limitStage(settings: Pick<Settings, "limiter" | "ban">): (bucket: Bucket) => Promise<Decision> {
  const { limiter, ban } = settings;
  // The limiter's own promise, not one around it: this runs on every request.
  return (bucket) => limiter.hit({ bucket: bucket.name, windows: bucket.limits.windows, ban });
}
