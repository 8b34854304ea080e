import type { Context } from "../context.js";
import type { Settings } from "../options.js";
import type { ApiKeyRecord } from "../ports.js";
import type { Exchange } from "./exchange.js";
import type { Routed } from "./route.js";

/**
 * Stage 6, run: the handler with its context (the stores, the path parameters, the caller, the
 * request's time and the headers gathered so far). Validation is the handler's first step.
 */
export function runStage(settings: Pick<Settings, "store" | "idempotency" | "basePath" | "deprecation">): (routed: Routed, exchange: Exchange, caller: ApiKeyRecord | undefined) => Promise<Response> {
  const { store, idempotency, basePath, deprecation } = settings;
  return ({ handler, params }, exchange, caller) => {
    const ctx: Context = { store, idempotency, params, now: exchange.now, basePath, deprecation, headers: exchange.headers };
    if (caller) ctx.caller = caller;
    return handler(exchange.request, ctx);
  };
}
