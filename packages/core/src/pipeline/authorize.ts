import { ApiError } from "../errors.js";
import type { Settings } from "../options.js";
import type { ApiKeyRecord } from "../ports.js";
import type { RouteMatch } from "./find-route.js";
import type { Identity } from "./identify.js";

/**
 * Stage 4, authorize: the caller's key record, or `401 unauthorized` with a Bearer challenge
 * (`error="invalid_token"` when a bearer token was sent but is not valid, RFC 6750 section
 * 3.1). A public route (`/openapi.json`) needs no key; it then returns undefined.
 */
export function authorizeStage(_settings: Settings): (identity: Identity, match: RouteMatch | undefined) => ApiKeyRecord | undefined {
  return (identity, match) => {
    if (identity.caller || match?.route.public) return identity.caller;
    const challenge = identity.sentKey ? 'Bearer realm="petstore", error="invalid_token"' : 'Bearer realm="petstore"';
    const message = identity.sentKey ? "The API key is invalid or revoked" : "An API key is required: send Authorization: Bearer <key>";
    throw new ApiError("unauthorized", message, undefined, { "WWW-Authenticate": challenge });
  };
}
