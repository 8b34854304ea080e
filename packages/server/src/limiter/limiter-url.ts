import { hostPort } from "../cli/host-port.js";

/** A host and port of a Redis node or sentinel. */
interface RedisAddress {
  host: string;
  port: number;
}

/**
 * Where the limits live, as `--limiter` names it: one Redis (`redis://`, the URL as ioredis
 * reads it), a Redis Cluster given by some of its nodes (`redis+cluster://`), or the master
 * that Redis Sentinel names (`redis+sentinel://`). `tls`: the `rediss` forms.
 */
export type LimiterTarget =
  | { kind: "single"; url: string }
  | { kind: "cluster"; nodes: RedisAddress[]; tls: boolean; username?: string; password?: string }
  | {
      kind: "sentinel";
      sentinels: RedisAddress[];
      name: string;
      db: number;
      tls: boolean;
      username?: string;
      password?: string;
    };

const SINGLE = /^rediss?:\/\/[^\s,]+$/;
const SEVERAL = /^(rediss?)\+(cluster|sentinel):\/\/(?:([^@/?#\s]*)@)?([^/?#\s]+)(\/[^?#\s]*)?$/;

/** `host[:port]` or `[v6]:port`, with `defaultPort` when none is given. */
function address(text: string, defaultPort: number): RedisAddress {
  const address = hostPort(text);
  const port = address?.port === undefined ? defaultPort : Number(address.port);
  if (address === undefined || port < 1 || port > 65_535) throw new Error(`'${text}' is not HOST[:PORT]`);
  return { host: address.host, port };
}

/**
 * Reads a limiter URL; throws an Error whose message says what is wrong, never repeating the
 * URL (it may hold a password):
 * - `redis://[USER:PASSWORD@]HOST[:PORT][/DB]`, `rediss://...`: one Redis;
 * - `redis+cluster://[USER:PASSWORD@]HOST:PORT,HOST:PORT,...`: a Redis Cluster, given by any of
 *   its nodes (the client learns the rest from them);
 * - `redis+sentinel://[USER:PASSWORD@]HOST:PORT,HOST:PORT,.../MASTER[/DB]`: the master that the
 *   sentinels (default port 26379) call MASTER; the credentials are the master's.
 * `rediss+cluster://` and `rediss+sentinel://` speak TLS to every node (and sentinel).
 */
export function parseLimiterUrl(url: string): LimiterTarget {
  if (SINGLE.test(url) && URL.canParse(url)) return { kind: "single", url };
  const match = SEVERAL.exec(url);
  if (match === null)
    throw new Error(
      "must be redis://HOST[:PORT][/DB], redis+cluster://HOST:PORT,HOST:PORT,... or redis+sentinel://HOST:PORT,HOST:PORT,.../MASTER (rediss... for TLS)",
    );
  const [, scheme, kind, userinfo, hosts, path = ""] = match;
  const credentials: { username?: string; password?: string } = {};
  if (userinfo !== undefined) {
    const [user = "", password] = userinfo.split(/:(.*)/s);
    if (user !== "") credentials.username = decodeURIComponent(user);
    if (password !== undefined && password !== "") credentials.password = decodeURIComponent(password);
  }
  const tls = scheme === "rediss";
  if (kind === "cluster") {
    if (path !== "" && path !== "/" && path !== "/0")
      throw new Error("a Redis Cluster has only database 0: redis+cluster://HOST:PORT,HOST:PORT,...");
    return { kind, nodes: hosts!.split(",").map((host) => address(host, 6379)), tls, ...credentials };
  }
  const [, name, db = "0", ...rest] = path.split("/");
  if (!name || rest.length > 0 || !/^\d+$/.test(db))
    throw new Error(
      "redis+sentinel:// needs the master's name as its path: redis+sentinel://HOST:PORT,HOST:PORT,.../MASTER[/DB]",
    );
  return {
    kind: "sentinel",
    sentinels: hosts!.split(",").map((host) => address(host, 26379)),
    name: decodeURIComponent(name),
    db: Number(db),
    tls,
    ...credentials,
  };
}
