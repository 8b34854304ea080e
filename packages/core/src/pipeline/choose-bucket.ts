import { accountBucket, keyBucket } from "../keys/bucket.js";
import type { Settings } from "../options.js";
import type { CallerLimits } from "../plans.js";
import type { ApiKeyRecord } from "../ports.js";
import { addressBucket, type ClientInfo, clientAddress } from "../http/client-address.js";
import type { Identity } from "./identify.js";

/** A bucket a request counts against beside its own: its account's, shared by the account's keys. */
interface SharedBucket {
  name: string;
  limits: CallerLimits;
}

/** The rate-limit bucket a request counts against, and the limits of its windows. */
export interface Bucket {
  /** `{<account id>}key:<key id>`, or `ip:<address>` for a caller without a valid key. */
  name: string;
  /** The client's address, when it named the bucket. */
  client: string | undefined;
  limits: CallerLimits;
  /** The buckets its requests also count against, each admitting them or not. */
  shared?: readonly SharedBucket[];
}

/**
 * Said once per `createPetstore` when a caller without a valid key arrives without a client
 * address: a host that mounts `fetch` bare (`serve({ fetch: petstore.fetch })`) would put every
 * such caller into one bucket, where one abuser bans them all.
 */
const MISSING_CLIENT_ADDRESS =
  "@petstore/core: a request without a valid API key came without a client address, so all such callers share one rate-limit bucket (ip:unknown) and one ban. " +
  "Pass the socket's address: petstore.fetch(request, { clientAddress }). (Said once.)";

/**
 * Stage 2, choose the bucket: the caller's key with its plan's limits and its account's bucket
 * beside it (shared by the account's keys), or for a caller without a valid key (none, an
 * unknown, revoked or expired one, a secret rolled out: see `lapse`) its client address (the
 * only time the address is looked up), limited as the Free plan. Without an address, the host
 * is told once on the console (`console.warn`).
 */
export function chooseBucketStage(
  settings: Pick<Settings, "limitsOf" | "isTrustedProxy">,
): (request: Request, info: ClientInfo | undefined, identity: Identity) => Bucket {
  const { limitsOf, isTrustedProxy } = settings;
  // A key's bucket and limits, kept per key record (the key cache hands out the same record for
  // seconds at a time): one object and one name string, whose hash the limiter's Map then knows.
  // Made anew per request instead, a GET took about 4% more CPU in process.
  const keyBuckets = new WeakMap<ApiKeyRecord, Bucket>();
  let warned = false;
  return (request, info, { caller }) => {
    if (caller) {
      let bucket = keyBuckets.get(caller);
      if (!bucket) {
        const { id, accountId, account } = caller;
        bucket = { name: keyBucket(id, accountId), client: undefined, limits: limitsOf(caller) };
        // A store that reads no account with its keys leaves each key counted alone.
        if (account) bucket.shared = [{ name: accountBucket(accountId), limits: limitsOf(account) }];
        keyBuckets.set(caller, bucket);
      }
      return bucket;
    }
    const socket = info?.clientAddress;
    if (socket === undefined && !warned) {
      warned = true;
      console.warn(MISSING_CLIENT_ADDRESS);
    }
    const client = clientAddress(request, socket, isTrustedProxy);
    return { name: `ip:${addressBucket(client)}`, client, limits: limitsOf(undefined) };
  };
}
