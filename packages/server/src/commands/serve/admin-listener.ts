import type { Petstore } from "@petstore/core";
import { ADMIN_BASE_PATH, adminFetch } from "../../http/admin-fetch.js";
import type { Storage } from "../../storage/open-storage.js";
import { type RunningServer, serve } from "../../http/serve.js";
import type { Io } from "../_command.js";
import { isLoopback, isWildcard, type ServeConfig } from "./config.js";
import { ipVersion } from "./ip-version.js";
import { listenFailure } from "./listen-failure.js";
import { logLine } from "./log.js";

/**
 * The `Host` names (as a URL's hostname: lowercase, IPv6 in brackets) the admin listener on
 * `listen` answers: its own address; on loopback every loopback address and `localhost` (a
 * tunnel's near end, `ssh -L`, is one of them); on a wildcard any IP address (a name is what a
 * rebinding page needs; an address is no rebinding); and the names given (`--admin-host`).
 */
export function adminHosts(listen: string, names: readonly string[]): (host: string) => boolean {
  const bare = (host: string) => host.replace(/^\[(.*)\]$/, "$1");
  const own = bare(listen);
  return (host) => {
    const address = bare(host);
    if (names.includes(host) || address === own) return true;
    if (isLoopback(own)) return address === "localhost" || (ipVersion(address) !== 0 && isLoopback(address));
    return isWildcard(own) && ipVersion(address) !== 0;
  };
}

/**
 * The admin listener, when asked for (`--admin-listen`): the admin API and the operator's
 * page on an address of their own, never on the API's port. Started before the API's; every
 * change made through it applies at once to the API of this process (`forgetKey`).
 */
export async function startAdmin(
  config: ServeConfig,
  storage: Storage,
  api: Pick<Storage["adapters"], "limiter" | "idempotency"> & Pick<Petstore, "forgetKey">,
  io: Io,
): Promise<RunningServer | undefined> {
  if (!config.adminListen) return undefined;
  const { host, port } = config.adminListen;
  const fetch = adminFetch({
    keys: storage.adapters.keys,
    limiter: api.limiter,
    idempotency: api.idempotency,
    onKeyChange: api.forgetKey,
    allowHost: adminHosts(host, config.adminHosts),
    adminTokens: storage.adminTokens,
    log: io.out,
    bodyTimeoutMs: config.bodyTimeoutMs,
  });
  const server = await serve({ fetch, hostname: host, port, bodyTimeoutMs: config.bodyTimeoutMs }).catch(
    (error: unknown) => {
      throw new Error(listenFailure(" for the admin API", host, port, error, "--admin-listen HOST:PORT"));
    },
  );
  // The address really listened on: a wildcard is said as one, not as the loopback a person here may paste.
  const url = `http://${server.hostname.includes(":") ? `[${server.hostname}]` : server.hostname}:${server.port}`;
  logLine(io, "admin listening", {
    url: `${url}/`,
    api: `${url}${ADMIN_BASE_PATH}`,
    host: server.hostname,
    port: server.port,
  });
  return server;
}
