import { ApiError } from "../errors.js";
import { type ClientInfo, clientAddress } from "../http/client-address.js";
import { addressRanges } from "../http/ip-addresses.js";
import type { Settings } from "../options.js";
import type { ApiKeyRecord } from "../ports.js";

/**
 * The allowlists a request of `caller` must be inside, every one of them: its key's and its
 * account's (read with the key), each only when it has ranges.
 */
function allowlistsOf(caller: ApiKeyRecord): (readonly string[])[] {
  return [caller.allowFrom, caller.account?.allowFrom].filter((ranges) => ranges !== undefined);
}

/**
 * Stage 5b, permit the address: `403 address_not_allowed` when the caller's key or its
 * account carries CIDR ranges and the client address (the socket's, or `X-Forwarded-For` from
 * a trusted proxy, as the anonymous bucket reads it) is outside them (outside either, when both
 * do); an IPv4 client seen as `::ffff:a.b.c.d` is matched as its IPv4 address, and a host that
 * gives no address is outside every range. Checked after the limiter, so the refusal counts as the key's request
 * and carries its rate-limit headers; a public route (`/openapi.json`) is served to anyone.
 */
export function permitAddressStage(
  settings: Pick<Settings, "isTrustedProxy">,
): (request: Request, info: ClientInfo | undefined, caller: ApiKeyRecord | undefined) => void {
  const { isTrustedProxy } = settings;
  // The key cache hands out the same record for seconds at a time: its ranges are read once.
  const matchers = new WeakMap<ApiKeyRecord, ((address: string) => boolean)[]>();
  return (request, info, caller) => {
    if (!caller) return;
    let inside = matchers.get(caller);
    if (!inside) matchers.set(caller, (inside = allowlistsOf(caller).map(addressRanges)));
    if (inside.length === 0) return;
    const address = clientAddress(request, info?.clientAddress, isTrustedProxy);
    if (!inside.every((allowed) => allowed(address)))
      throw new ApiError("address_not_allowed", `This API key is not allowed from the address ${address}`);
  };
}
