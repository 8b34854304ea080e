import type { Settings } from "../options.js";
import type { CallerLimits } from "../plans.js";
import type { ApiKeyRecord } from "../ports.js";
import { addressBucket, type ClientInfo, clientAddress } from "./client-address.js";
import type { Identity } from "./identify.js";

/** The rate-limit bucket a request counts against, and the limits of its windows. */
export interface Bucket {
  /** `key:<key id>`, or `ip:<address>` for a caller without a valid key. */
  name: string;
  /** The client's address, when it named the bucket. */
  client: string | undefined;
  limits: CallerLimits;
}

/**
 * Stage 2, choose the bucket: the caller's key with its plan's limits, or for a caller without
 * a valid key its client address (the only time the address is looked up), limited as the
 * Free plan.
 */
export function chooseBucketStage(settings: Pick<Settings, "limitsOf" | "isTrustedProxy">): (request: Request, info: ClientInfo | undefined, identity: Identity) => Bucket {
  const { limitsOf, isTrustedProxy } = settings;
  // A key's bucket, kept per key record (the key cache hands out the same record for seconds
  // at a time): one object and one name string, whose hash the limiter's Map then knows.
  const keyBuckets = new WeakMap<ApiKeyRecord, Bucket>();
  return (request, info, { caller }) => {
    if (caller) {
      let bucket = keyBuckets.get(caller);
      if (!bucket) keyBuckets.set(caller, (bucket = { name: `key:${caller.id}`, client: undefined, limits: limitsOf(caller) }));
      return bucket;
    }
    const client = clientAddress(request, info?.clientAddress, isTrustedProxy);
    return { name: `ip:${addressBucket(client)}`, client, limits: limitsOf(undefined) };
  };
}
