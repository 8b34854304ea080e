import { ADMIN_BASE_PATH, adminFetch } from "../../admin-fetch.js";
import type { Storage } from "../../open-storage.js";
import { type RunningServer, serve } from "../../serve.js";
import type { Io } from "../_command.js";
import type { ServeConfig } from "./config.js";
import { listenFailure } from "./listen-failure.js";
import { localUrl, logLine } from "./log.js";

/**
 * The admin listener, when asked for (`--admin-listen`): the admin API and the operator's
 * page on an address of their own, never on the API's port. Started before the API's.
 */
export async function startAdmin(
  config: ServeConfig,
  storage: Storage,
  api: Pick<Storage["adapters"], "limiter">,
  io: Io,
): Promise<RunningServer | undefined> {
  if (!config.adminListen) return undefined;
  const { host, port } = config.adminListen;
  const fetch = adminFetch({
    keys: storage.adapters.keys,
    limiter: api.limiter,
    adminTokens: storage.adminTokens,
    log: io.out,
    bodyTimeoutMs: config.bodyTimeoutMs,
  });
  const server = await serve({ fetch, hostname: host, port, bodyTimeoutMs: config.bodyTimeoutMs }).catch(
    (error: unknown) => {
      throw new Error(listenFailure(" for the admin API", host, port, error, "--admin-listen HOST:PORT"));
    },
  );
  const url = localUrl(server.hostname, server.port);
  logLine(io, "admin listening", {
    url: `${url}/`,
    api: `${url}${ADMIN_BASE_PATH}`,
    host: server.hostname,
    port: server.port,
  });
  return server;
}
