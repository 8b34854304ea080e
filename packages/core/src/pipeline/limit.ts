import type { Settings } from "../options.js";
import type { Decision } from "../ports.js";
import { addressBucket, clientAddress } from "./client-address.js";
import type { Exchange } from "./exchange.js";

/**
 * Stage 2, rate-limit: the request counts against its bucket in one atomic hit of the
 * limiter. The bucket is the caller's key, or for a caller without a valid key its client
 * address (the only time the address is looked up), limited as the Free plan.
 */
export function limitStage(settings: Pick<Settings, "limiter" | "limitsOf" | "ban" | "isTrustedProxy">): (exchange: Exchange) => Promise<Decision> {
  const { limiter, limitsOf, ban, isTrustedProxy } = settings;
  return (exchange) => {
    const caller = exchange.identity?.caller;
    if (caller) exchange.bucket = `key:${caller.id}`;
    else {
      exchange.client = clientAddress(exchange.request, exchange.info?.clientAddress, isTrustedProxy);
      exchange.bucket = `ip:${addressBucket(exchange.client)}`;
    }
    const limits = (exchange.limits = limitsOf(caller));
    // The limiter's own promise, not one around it: this runs on every request.
    return limiter.hit({ bucket: exchange.bucket, windows: limits.windows, ban, now: exchange.now });
  };
}
