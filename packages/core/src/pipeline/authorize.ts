import { ApiError } from "../errors.js";
import type { ApiKeyRecord } from "../ports.js";
import type { RouteMatch } from "../routes.js";
import type { Identity, RefusalReason } from "./identify.js";

/** A 401 with its Bearer challenge; `invalid`: a token was sent but does not work (RFC 6750 section 3.1). */
const unauthorized = (message: string, invalid: boolean) =>
  new ApiError("unauthorized", message, undefined, {
    "WWW-Authenticate": invalid ? 'Bearer realm="petstore", error="invalid_token"' : 'Bearer realm="petstore"',
  });

/** What a known key's owner is told, so that an expiry is never taken for a revocation. */
const REFUSED: Record<RefusalReason, string> = {
  revoked: "The API key has been revoked",
  expired: "The API key has expired",
  rolled_out: "This secret of the API key was replaced when the key was rolled: use the new one",
};

/** Why the identified caller may not call; undefined when it may. */
function refusalOf(identity: Identity): ApiError | undefined {
  if (identity.caller) return undefined;
  if (identity.refused) return unauthorized(REFUSED[identity.refused.reason], true);
  return identity.sentKey
    ? unauthorized("The API key is not valid", true)
    : unauthorized("An API key is required: send Authorization: Bearer <key>", false);
}

/**
 * Stage 5, authorize: the caller's key record, or `401 unauthorized` with a Bearer challenge
 * and a message saying why (no key, an unknown one, a revoked one, an expired one, a rolled
 * out secret). A public route (`/openapi.json`) needs no key: without a usable one it returns
 * undefined.
 */
export function authorize(identity: Identity, match: RouteMatch | undefined): ApiKeyRecord | undefined {
  const refusal = refusalOf(identity);
  if (refusal === undefined) return identity.caller;
  if (match?.route.public) return undefined;
  throw refusal;
}
