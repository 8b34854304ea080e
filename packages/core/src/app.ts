import type { PetstoreOptions } from "./options.js";
import { resolveOptions } from "./options.js";
import { authorize } from "./pipeline/authorize.js";
import { beginExchange, type ClientInfo } from "./pipeline/exchange.js";
import { failStage } from "./pipeline/fail.js";
import { finishStage } from "./pipeline/finish.js";
import { keyIdentifier } from "./pipeline/identify-caller.js";
import { limitStage } from "./pipeline/limit.js";
import { refuseStage } from "./pipeline/refuse.js";
import { route, routeFinder } from "./pipeline/route.js";
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
 * of checks, with the contract's headers on every answer.
 * @example
 * const petstore = createPetstore({ store, keys, limiter, idempotency });
 * Bun.serve({ fetch: (request, server) => petstore.fetch(request, { clientAddress: server.requestIP(request)?.address }) });
 */
export function createPetstore(options: PetstoreOptions): Petstore {
  const settings = resolveOptions(options);
  const identify = keyIdentifier(settings.keys, settings.keyCacheMs);
  const limit = limitStage(settings);
  const refuse = refuseStage(settings);
  const findRoute = routeFinder(settings.basePath);
  const run = runStage(settings);
  const fail = failStage(settings);
  const finish = finishStage(settings, findRoute);

  return {
    fetch: async (input: Request | string | URL, second?: ClientInfo | RequestInit) => {
      // As fetch is called: a URL and its init make the Request; a host's Request comes with the client's address.
      // (Any other object is taken for a Request: hosts may hand over their own Request class.)
      const byUrl = typeof input === "string" || input instanceof URL;
      const [request, info] = byUrl ? [new Request(input, second as RequestInit | undefined), undefined] : [input, second as ClientInfo | undefined];
      const exchange = beginExchange(request, info, settings.clock()); // request id, path, standard headers
      let response: Response;
      try {
        const identity = await identify(request, exchange.now); // 1. the caller, by its key
        exchange.identity = identity;
        const decision = await limit(exchange); // 2. one hit on the bucket: the key, else the client address
        refuse(exchange, decision); // 3. rate-limit headers; 429 when banned or over a limit
        const match = await findRoute(request, exchange.pathname);
        const caller = authorize(identity, match); // 4. 401 without a valid key, unless the route is public
        const routed = route(match, request.method, exchange.pathname); // 5. 404, or 405 with Allow
        response = await run(routed, exchange, caller); // 6. the operation: validate, then run
      } catch (thrown) {
        response = fail(exchange, thrown); // the Error answer; honest rate-limit headers on an early 503
      }
      return finish(exchange, response); // HEAD without its body; onResponse
    },
  };
}
