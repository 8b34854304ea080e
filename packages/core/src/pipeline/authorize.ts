import { ApiError } from "../errors.js";
import type { ApiKeyRecord, Decision } from "../ports.js";
import type { RouteMatch } from "./find-route.js";
import type { Identity } from "./identify.js";

/** A 401 with its Bearer challenge; `invalid`: a token was sent but does not work (RFC 6750 section 3.1). */
const unauthorized = (message: string, invalid: boolean) =>
  new ApiError("unauthorized", message, undefined, {
    "WWW-Authenticate": invalid ? 'Bearer realm="petstore", error="invalid_token"' : 'Bearer realm="petstore"',
  });

/** Why the identified caller may not call at `now`; undefined when it may. */
function refusalOf(identity: Identity, now: number): ApiError | undefined {
  const { caller } = identity;
  if (!caller)
    return identity.sentKey
      ? unauthorized("The API key is invalid or revoked", true)
      : unauthorized("An API key is required: send Authorization: Bearer <key>", false);
  if (caller.expiresAt !== undefined && now >= caller.expiresAt) return unauthorized("The API key has expired", true);
  if (identity.oldSecret && now >= caller.rolled!.until)
    return unauthorized("This secret of the API key was replaced when the key was rolled: use the new one", true);
  return undefined;
}

/**
 * Stage 5, authorize: the caller's key record, or `401 unauthorized` with a Bearer challenge.
 * A key past its expiry, and an old secret past its roll's overlap, are refused at the
 * limiter's instant (its store's clock, as every server has it), even while the key cache
 * still holds them. A public route (`/openapi.json`) needs no key: without a usable one it
 * returns undefined.
 */
export function authorize(
  identity: Identity,
  match: RouteMatch | undefined,
  decision: Decision,
): ApiKeyRecord | undefined {
  const refusal = refusalOf(identity, decision.now);
  if (refusal === undefined) return identity.caller;
  if (match?.route.public) return undefined;
  throw refusal;
}
