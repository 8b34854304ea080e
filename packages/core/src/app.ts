import type { PetstoreOptions } from "./options.js";
import { resolveOptions } from "./options.js";
import { authorize } from "./pipeline/authorize.js";
import { beginExchange, type ClientInfo } from "./pipeline/exchange.js";
import { failStage } from "./pipeline/fail.js";
import { finishStage } from "./pipeline/finish.js";
import { keyIdentifier } from "./pipeline/identify-caller.js";
import { limitStage } from "./pipeline/limit.js";
import { refuseStage } from "./pipeline/refuse.js";
import { handlerFor, routeFinder } from "./pipeline/route.js";
import { runStage } from "./pipeline/run.js";

export interface Petstore {
  /** A fetch handler; an arrow property, so it can be passed around unbound. */
  fetch: (request: Request, info?: ClientInfo) => Promise<Response>;
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
    fetch: async (request, info) => {
      // Request id, path, and the headers every answer carries.
      const exchange = beginExchange(request, info, settings.clock());
      let response: Response;
      try {
        const identity = (exchange.identity = await identify(request, exchange.now)); // 1. who is calling
        refuse(exchange, await limit(exchange)); // 2. count against the caller's bucket; 3. 429 when banned or over
        const match = await findRoute(exchange.pathname);
        const caller = authorize(identity, match); // 4. 401 without a valid key, but on a public route
        const handler = handlerFor(match, request.method, exchange.pathname); // 5. 404, or 405 with Allow
        response = await run(handler, exchange, match!, caller); // 6. validate and run the operation
      } catch (thrown) {
        response = fail(exchange, thrown); // the Error answer, with honest rate-limit headers on a 503
      }
      return finish(exchange, response); // HEAD without its body; onResponse
    },
  };
}
