import { hostPort } from "../../cli/host-port.js";
import { trustedProxies } from "@petstore/core";
import type { LimiterConfig } from "../../limiter/open-limiter.js";
import type { DbConfig } from "../../storage/open-storage.js";
import type { ParsedArgs } from "../../cli/parse-args.js";
import { UsageError } from "../../cli/usage-error.js";
import { MAX_BODY_TIMEOUT_MS } from "../../http/serve.js";
import type { Env } from "../_command.js";
import { dbConfig, integerSetting, limiterConfig, optionalEnv, setting } from "../_options.js";
import { type BootstrapKey, bootstrapConfig } from "./bootstrap-key.js";
import { ipVersion } from "./ip-version.js";

/** What `petstore serve` was told, from its flags and the environment. */
export interface ServeConfig {
  port: number;
  host: string;
  db: DbConfig;
  /** Where the rate limits live when not in the database (`--limiter`). */
  limiter: LimiterConfig | undefined;
  /** Record this server's limiter as the database's, over another one recorded (`--change-limiter`). */
  changeLimiter: boolean;
  trustProxy: string[];
  /** Development mode: a database without an active key gets a Free key, printed once. */
  dev: boolean;
  bootstrap: BootstrapKey | undefined;
  /** Where `GET /metrics` is served; undefined: nowhere (the default). */
  metricsListen: { host: string; port: number } | undefined;
  /** Where the admin API and the operator's page are served (`--admin-listen`); undefined: nowhere (the default). */
  adminListen: { host: string; port: number } | undefined;
  /** Host names the admin listener answers besides its own address (`--admin-host`), lowercase. */
  adminHosts: string[];
  /** A page telling clients of a rolled key how to take its new secret (`--rolled-key-link`). */
  rolledKeyLink: string | undefined;
  /** How long a request body may take to arrive before a 408 (`PETSTORE_BODY_TIMEOUT_MS`). */
  bodyTimeoutMs: number;
}

/** The default of `PETSTORE_BODY_TIMEOUT_MS`: a body not in within 30 s gets a 408. */
const DEFAULT_BODY_TIMEOUT_MS = 30_000;

/** An IP address, or a host name that is not an address gone wrong (999.1.1.1, 1:2:3). */
function plausibleHost(host: string): boolean {
  if (ipVersion(host) !== 0 || ipVersion(/^\[(.*)\]$/.exec(host)?.[1] ?? "") === 6) return true;
  return !/^[\d.]+$/.test(host) && !host.includes(":") && /^[A-Za-z0-9.-]+$/.test(host);
}

/** `HOST:PORT` or `[IPv6]:PORT`, as `--metrics-listen` and `--admin-listen` take it. */
function listenAddress(text: string, flag: string): { host: string; port: number } {
  const address = hostPort(text);
  if (address?.port === undefined)
    throw new UsageError(`${flag} must be HOST:PORT (e.g. 127.0.0.1:9464), not '${text}'`);
  return { host: address.host, port: integerSetting(address.port, `${flag}'s port`, 0, 65_535) };
}

export function serveConfig(args: ParsedArgs, env: Env): ServeConfig {
  const dev = args.switches.has("dev");
  const port = setting(args, "port", env, "PETSTORE_PORT");
  // Development mode stays on loopback unless told otherwise.
  const host = setting(args, "host", env, "PETSTORE_HOST")?.value ?? (dev ? "127.0.0.1" : "0.0.0.0");
  if (!plausibleHost(host))
    throw new UsageError(
      `${setting(args, "host", env, "PETSTORE_HOST")?.source ?? "--host"} must be an IP address or a host name, not '${host}'`,
    );
  const trustProxy = (args.values["trust-proxy"] ?? "")
    .split(",")
    .map((cidr) => cidr.trim())
    .filter(Boolean);
  try {
    trustedProxies(trustProxy);
  } catch (error) {
    throw new UsageError(`--trust-proxy: ${(error as Error).message}`);
  }
  const apiPort = port === undefined ? 8080 : integerSetting(port.value, port.source, 0, 65_535);
  const metricsListen =
    args.values["metrics-listen"] === undefined
      ? undefined
      : listenAddress(args.values["metrics-listen"], "--metrics-listen");
  if (metricsListen && sharesAddress(metricsListen, { host, port: apiPort })) {
    throw new UsageError(
      `--metrics-listen ${args.values["metrics-listen"]} is the API's own address: give the metrics listener a port of its own`,
    );
  }
  const adminText = args.values["admin-listen"];
  // A port alone is on loopback: the admin API is for the operator's machine unless said otherwise.
  const adminListen =
    adminText === undefined
      ? undefined
      : listenAddress(/^\d+$/.test(adminText) ? `127.0.0.1:${adminText}` : adminText, "--admin-listen");
  if (adminListen && sharesAddress(adminListen, { host, port: apiPort })) {
    throw new UsageError(
      `--admin-listen ${adminText} is the API's own address: the admin API is never served on the API's port; give it a port of its own`,
    );
  }
  if (adminListen && metricsListen && sharesAddress(adminListen, metricsListen)) {
    throw new UsageError(`--admin-listen ${adminText} is the metrics listener's address: give each its own port`);
  }
  const adminHosts = (args.values["admin-host"] ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  for (const name of adminHosts)
    if (!plausibleHost(name))
      throw new UsageError(`--admin-host must be host names separated by commas, not '${name}'`);
  const adminPublic = args.switches.has("admin-listen-public");
  if (!adminListen && (adminHosts.length > 0 || adminPublic))
    throw new UsageError(`--${adminPublic ? "admin-listen-public" : "admin-host"} needs --admin-listen`);
  // The admin API changes what a business sells: other machines reach it only when said so.
  if (adminListen && !isLoopback(adminListen.host) && !adminPublic)
    throw new UsageError(
      `--admin-listen ${adminText} is reachable from other machines: listen on 127.0.0.1 and reach it through a tunnel (ssh -L), or give --admin-listen-public too`,
    );
  const rolledKeyLink = setting(args, "rolled-key-link", env, "PETSTORE_ROLLED_KEY_LINK");
  if (rolledKeyLink && !/^https?:\/\/\S+$/.test(rolledKeyLink.value))
    throw new UsageError(`${rolledKeyLink.source} must be an http(s) URL, not '${rolledKeyLink.value}'`);
  const bodyTimeout = optionalEnv(env, "PETSTORE_BODY_TIMEOUT_MS");
  return {
    port: apiPort,
    host,
    db: dbConfig(args, env),
    limiter: limiterConfig(args, env),
    changeLimiter: args.switches.has("change-limiter"),
    trustProxy,
    dev,
    bootstrap: bootstrapConfig(env),
    metricsListen,
    adminListen,
    adminHosts,
    rolledKeyLink: rolledKeyLink?.value,
    bodyTimeoutMs:
      bodyTimeout === undefined
        ? DEFAULT_BODY_TIMEOUT_MS
        : integerSetting(bodyTimeout, "PETSTORE_BODY_TIMEOUT_MS", 1, MAX_BODY_TIMEOUT_MS),
  };
}

const WILDCARDS = new Set(["0.0.0.0", "::", "[::]"]);

/** An address only this machine reaches: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** A wildcard address: every interface of this machine. */
export const isWildcard = (host: string): boolean => WILDCARDS.has(host);

/** Two listeners that would compete for one port: the same port (not 0) on the same or a wildcard address. */
function sharesAddress(a: { host: string; port: number }, b: { host: string; port: number }): boolean {
  if (a.port === 0 || a.port !== b.port) return false;
  return a.host === b.host || WILDCARDS.has(a.host) || WILDCARDS.has(b.host);
}
