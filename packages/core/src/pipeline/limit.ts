import type { Settings } from "../options.js";
import type { Decision } from "../ports.js";
import type { Bucket } from "./choose-bucket.js";

/** Stage 2, limit: the request counts against its bucket, in one atomic hit of the limiter. */
export function limitStage(settings: Pick<Settings, "limiter" | "ban">): (bucket: Bucket, now: number) => Promise<Decision> {
  const { limiter, ban } = settings;
  // The limiter's own promise, not one around it: this runs on every request.
  return (bucket, now) => limiter.hit({ bucket: bucket.name, windows: bucket.limits.windows, ban, now });
}
