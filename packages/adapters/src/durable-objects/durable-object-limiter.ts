import {
  bucketGroup,
  type BucketState,
  type Decision,
  type HitInput,
  type RateLimiter,
  StorageUnavailableError,
} from "@petstore/core";
import type { StoreClockOptions } from "../_sql/store-clock.js";

/**
 * The part of a Durable Object namespace binding (`env.LIMITER`) the limiter uses. Written out
 * here so that no Workers type package is needed.
 */
export interface DurableObjectNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): { fetch(request: Request): Promise<Response> };
}

/**
 * A rate limiter whose buckets live in Durable Objects of the class `PetstoreRateLimiter`, one
 * object per bucket (named after it), or per group for a bucket whose name begins with one
 * (`{acct_1}`: an account's buckets, which a hit decides together, in one object): every
 * isolate that asks about a bucket reaches the same object, which decides one hit at a time on
 * its durable storage, so the limits hold across a whole deployment and survive restarts.
 * Decisions use the `now` of each hit (core's clock). An object answers about a thousand
 * requests a second, and one object serves every key of an account: an account whose keys
 * together send more than that (limits above 60,000 a minute) queue at its object, while
 * different accounts never wait for each other.
 * @example const petstore = createPetstore({ ...d1Adapters(env.DB), limiter: durableObjectLimiter(env.LIMITER) });
 */
export function durableObjectLimiter(
  namespace: DurableObjectNamespace,
  options: StoreClockOptions = {},
): Required<RateLimiter> {
  if (typeof namespace?.get !== "function" || typeof namespace.idFromName !== "function")
    throw new TypeError(
      "durableObjectLimiter needs the Durable Object namespace bound to PetstoreRateLimiter, e.g. durableObjectLimiter(env.LIMITER)",
    );
  const { clock } = options;
  /** One request to the bucket's object: `what` (hit, peek, unban) with the input as JSON. */
  async function ask<T>(what: string, input: Partial<HitInput> & { bucket: string }): Promise<T> {
    const group = bucketGroup(input.bucket);
    const stub = namespace.get(namespace.idFromName(group === undefined ? input.bucket : `{${group}}`));
    const body = JSON.stringify(clock ? { ...input, now: clock() } : input);
    let response: Response;
    try {
      response = await stub.fetch(new Request(`https://rate-limiter.invalid/${what}`, { method: "POST", body }));
    } catch (error) {
      // An object that is overloaded, being reset or unreachable: the request may be retried.
      throw new StorageUnavailableError("the rate limiter's Durable Object is unavailable", { cause: error });
    }
    if (!response.ok)
      throw new StorageUnavailableError(`the rate limiter's Durable Object answered ${response.status}`);
    return (await response.json()) as T;
  }
  return {
    hit: (input) => ask<Decision>("hit", input),
    peek: (input) => ask<BucketState>("peek", input),
    unban: async (bucket) => (await ask<{ unbanned: boolean }>("unban", { bucket })).unbanned,
  };
}
