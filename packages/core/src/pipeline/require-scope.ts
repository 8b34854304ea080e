import { ApiError } from "../errors.js";
import type { ApiKeyRecord } from "../ports.js";
import type { Routed } from "./choose-handler.js";

/**
 * Stage 6b, require the scope: `403 insufficient_scope` when the operation needs a scope the
 * caller's key lacks, with the Bearer challenge naming the scope it needs (RFC 6750 section
 * 3.1). A key without scopes of its own has every scope; a public operation needs none.
 */
export function requireScope({ scope }: Routed, caller: ApiKeyRecord | undefined): void {
  if (scope === undefined || caller?.scopes === undefined || caller.scopes.includes(scope)) return;
  throw new ApiError(
    "insufficient_scope",
    `This API key lacks the scope ${scope}, which this operation needs`,
    undefined,
    {
      "WWW-Authenticate": `Bearer error="insufficient_scope", scope="${scope}"`,
    },
  );
}
