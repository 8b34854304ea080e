import type { PetstoreOptions } from "./options.js";
import { resolveOptions } from "./options.js";
import type { Decision } from "./ports.js";
import { arrive } from "./pipeline/arrival.js";
import { authorizeStage } from "./pipeline/authorize.js";
import { type Bucket, chooseBucketStage } from "./pipeline/choose-bucket.js";
import { chooseHandlerStage } from "./pipeline/choose-handler.js";
import type { ClientInfo } from "./pipeline/client-address.js";
import { type Failure, failStage } from "./pipeline/fail.js";
import { type RouteMatch, findRouteStage } from "./pipeline/find-route.js";
import { finishStage } from "./pipeline/finish.js";
import { type Identity, identifyStage } from "./pipeline/identify.js";
import { keyUseStage } from "./pipeline/key-use.js";
import { limitStage } from "./pipeline/limit.js";
import { refuseStage } from "./pipeline/refuse.js";
import { runStage } from "./pipeline/run.js";

export interface Petstore {
  /**
   * A fetch handler; an arrow property, so it can be passed around unbound. A host passes the
   * `Request` and the client's address; a test may call it as it calls `fetch`, with a URL
   * and a `RequestInit`.
   */
  fetch: {
    (request: Request, info?: ClientInfo): Promise<Response>;
    (url: string | URL, init?: RequestInit): Promise<Response>;
  };
}

/**
 * The Pet Store API as one fetch handler: the stages of `pipeline/` in the contract's order
 * of checks, each made once from the settings, each handed what the earlier ones decided.
 * @example
 * const petstore = createPetstore({ store, keys, limiter, idempotency });
 * Bun.serve({ fetch: (request, server) => petstore.fetch(request, { clientAddress: server.requestIP(request)?.address }) });
 */
export function createPetstore(options: PetstoreOptions): Petstore {
  const settings = resolveOptions(options);
  const findRoute = findRouteStage(settings);
  const identify = identifyStage(settings);
  const chooseBucket = chooseBucketStage(settings);
  const limit = limitStage(settings);
  const refuse = refuseStage(settings);
  const authorize = authorizeStage(settings);
  const chooseHandler = chooseHandlerStage(settings);
  const run = runStage(settings);
  const fail = failStage(settings);
  const keyUse = keyUseStage(settings);
  const finish = finishStage(settings);

  return {
    fetch: async (input: Request | string | URL, second?: ClientInfo | RequestInit) => {
      // As fetch is called: a URL and its init make the Request; a host's Request comes with the client's address.
      // (Any other object is taken for a Request: hosts may hand over their own Request class.)
      const byUrl = typeof input === "string" || input instanceof URL;
      const [request, info] = byUrl ? [new Request(input, second as RequestInit | undefined), undefined] : [input, second as ClientInfo | undefined];
      const arrival = arrive(request, settings.clock()); // its id, path and time
      let match: RouteMatch | undefined, identity: Identity | undefined, bucket: Bucket | undefined, decision: Decision | undefined, failure: Failure | undefined;
      let response: Response;
      try {
        const found = findRoute(request, arrival.pathname); // the route serving the path, if any: looked up once
        match = found instanceof Promise ? await found : found;
        identity = await identify(request, arrival.now); // 1. the caller, by its key
        bucket = chooseBucket(request, info, identity); // 2. its bucket: the key, else the client address
        decision = await limit(bucket); //    one atomic hit on it, at the limiter's instant
        refuse(decision); // 3. 429 when banned or over a limit
        const caller = authorize(identity, match, decision); // 4. 401 without a valid key, unless the route is public
        const routed = chooseHandler(match, request.method, arrival.pathname); // 5. 404, or 405 with Allow
        response = await run(routed, request, caller, arrival, bucket, decision); // 6. the operation: validate, then run
      } catch (thrown) {
        failure = fail(thrown, arrival, bucket, decision); // the Error answer; honest rate-limit headers on an early 503
        response = failure.response;
      }
      keyUse(response, identity, decision); // an old secret told so; the key's latest use, written in batches
      return finish(response, { request, arrival, match, identity, bucket, decision, failure }); // HEAD without its body; onResponse
    },
  };
}
