import type { PetstoreOptions } from "./options.js";
import { resolveOptions } from "./options.js";
import type { CallerLimits } from "./plans.js";
import type { Decision } from "./ports.js";
import { arrive } from "./pipeline/arrival.js";
import { authorize } from "./pipeline/authorize.js";
import { type Bucket, chooseBucketStage } from "./pipeline/choose-bucket.js";
import { chooseHandler } from "./pipeline/choose-handler.js";
import type { ClientInfo } from "./http/client-address.js";
import { type Failure, failStage } from "./pipeline/fail.js";
import { answerBeside, isUnder } from "./http/beside.js";
import { headResponse } from "./http/head-response.js";
import { routeTable } from "./http/route-table.js";
import { ROUTES, type RouteMatch } from "./routes.js";
import { type Identity, identifyStage } from "./pipeline/identify.js";
import { keyUseStage } from "./pipeline/key-use.js";
import { lapse } from "./pipeline/lapse.js";
import { permitAddressStage } from "./pipeline/permit-address.js";
import { limitStage } from "./pipeline/limit.js";
import { recordUsageStage } from "./pipeline/record-usage.js";
import { refuse } from "./pipeline/refuse.js";
import { reportStage } from "./pipeline/report.js";
import { requireScope } from "./pipeline/require-scope.js";
import { runStage } from "./pipeline/run.js";

export interface Petstore {
  /**
   * The fetch handler; an arrow property, so it can be passed around unbound. A host passes the
   * `Request` and the client's address.
   */
  fetch: (request: Request, info?: ClientInfo) => Promise<Response>;
  /**
   * `fetch` as `fetch` is called, with a URL and a `RequestInit` (and the client's address):
   * for tests and scripts (Hono's `app.request`).
   * @example const response = await petstore.request("http://test/v1/pets", { headers: { Authorization: `Bearer ${key}` } });
   */
  request: (url: string | URL, init?: RequestInit, info?: ClientInfo) => Promise<Response>;
  /**
   * Adds the keys' usage counts and last uses this instance holds to `keys` now, instead of
   * within the next 10 s: a host calls it when it stops, before it closes storage, so that a
   * clean stop loses no count. Rejects when the store fails (the counts are kept for a retry).
   */
  flush: () => Promise<void>;
  /**
   * Drops what this instance's key cache holds of a key, so that a change to it (an upgrade, a
   * roll, a revocation) applies to its next request here at once rather than within
   * `keyCacheMs`: pass it to `createAdmin`'s `onKeyChange` (or `keyLife`'s `onChange`).
   */
  forgetKey: (keyId: string) => void;
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
  const { basePath, beside } = settings;
  const findRoute = routeTable(ROUTES, basePath);
  const identify = identifyStage(settings);
  const chooseBucket = chooseBucketStage(settings);
  const limit = limitStage(settings);
  const permitAddress = permitAddressStage(settings);
  const run = runStage(settings);
  const fail = failStage(settings);
  const keyUse = keyUseStage(settings);
  const recordUsage = recordUsageStage(settings);
  const report = reportStage(settings);

  const fetch = async (request: Request, info?: ClientInfo) => {
    const arrival = arrive(request, settings.clock(), settings.monotonicClock()); // its id, path and time
    let match: RouteMatch | undefined,
      identity: Identity | undefined,
      bucket: Bucket | undefined,
      decision: Decision | undefined,
      limits: CallerLimits | undefined,
      failure: Failure | undefined;
    let response: Response;
    try {
      if (beside && !isUnder(basePath, arrival.pathname)) {
        response = await answerBeside(beside, request, arrival.requestId, arrival.pathname); // the host's page or a 404, neither limited nor authenticated
      } else {
        match = findRoute(arrival.pathname); // the route serving the path, if any: looked up once
        identity = await identify(request, arrival.started); // 1. the caller, by its key
        bucket = chooseBucket(request, info, lapse(identity, limit.instant())); // 2. its bucket: the key, else (no valid key, or one lapsed by the limiter's instant as estimated) the client address
        limits = bucket.limits;
        ({ decision, limits } = await limit(bucket)); // 3. one atomic hit on it and its account's, at the limiter's instant
        identity = lapse(identity, decision.now); // a key past its expiry, an old secret past its overlap: refused at the limiter's instant
        refuse(decision); // 4. 429 when banned or over a limit
        const caller = authorize(identity, match); // 5. 401 without a valid key, unless the route is public
        permitAddress(request, info, match?.route.public ? undefined : caller); // 403 from outside the key's or its account's ranges
        const routed = chooseHandler(match, request.method, arrival.pathname); // 6. 404, or 405 with Allow
        requireScope(routed, caller); // 403 when the key lacks the operation's scope
        response = await run(routed, request, caller, arrival, limits, decision); // 7. the operation: validate, then run
      }
    } catch (thrown) {
      failure = fail(thrown, arrival, limits, decision); // the Error answer; honest rate-limit headers on an early 503
      response = failure.response;
    }
    keyUse(response, identity, decision); // an old secret told so
    recordUsage(identity, decision, failure, arrival); // the key's usage by outcome and its last use, written in batches
    if (request.method === "HEAD") response = await headResponse(response); // without its body, with its length
    report(response, { request, info, arrival, match, identity, bucket, decision, failure }); // onResponse
    return response;
  };
  return {
    fetch,
    request: (url, init, info) => fetch(new Request(url, init), info),
    flush: () => settings.usage?.flush() ?? Promise.resolve(),
    forgetKey: identify.forget,
  };
}
