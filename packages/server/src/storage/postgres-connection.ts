import { readFileSync } from "node:fs";

/** A URL with its first host only, which `URL` reads (several hosts, `h1:p1,h2:p2`, it refuses). */
export function firstHostOf(url: string): string {
  return url.replace(/^([a-z]+:\/\/(?:[^/?#]*@)?[^/?#,]*),[^/?#]*/i, "$1");
}

type TargetSessionAttrs = "primary" | "read-only" | "standby" | "prefer-standby";
const SESSION_ATTRS = ["read-write", "primary", "read-only", "standby", "prefer-standby", "any"];

/** The options `postgresConnection` reads from the URL, and those given so that postgres.js reads no `PG*` variable. */
export interface PostgresConnectionOptions {
  prepare: boolean;
  target_session_attrs: TargetSessionAttrs | undefined;
  /** Off, postgres.js's sslmode (the URL's), or TLS verified against the CA of `sslrootcert`. */
  ssl?: false | "verify-full" | { ca: string; rejectUnauthorized: true; checkServerIdentity?: () => undefined };
}

/**
 * The URL and the postgres.js options for a `--db postgres://...` URL written as libpq users
 * write it, including several hosts (`postgres://h1:5432,h2:5432/db`, which `new URL` cannot
 * read) and these parameters:
 * - `target_session_attrs`: `read-write` (libpq: not a standby, and not read-only), `primary`,
 *   `read-only`, `standby`, `prefer-standby`, `any`. postgres.js tells a standby from a primary
 *   by `in_hot_standby` only for `primary`; its `read-write` looks at
 *   `default_transaction_read_only` alone, which a standby reports `off`, so a pool would settle
 *   on a standby and fail every write: `read-write` is handed over as `primary`.
 * - `prepare=false` (postgres.js's): no prepared statements.
 * - `sslmode`: as postgres.js reads it (`disable`, `prefer`, `require`, `verify-full`); without
 *   it, no TLS.
 * - `sslrootcert=PATH` (libpq's): the CA file to verify the server's certificate against (read
 *   now), with `sslmode` `verify-full` (the default then: the host name checked too) or
 *   `verify-ca`/`require` (the chain only, as libpq does with a root certificate);
 *   `sslrootcert=system`: the system's CAs, `verify-full`. postgres.js reads neither, and would
 *   send the parameter to the server, which refuses it.
 * Every option postgres.js would otherwise read from a `PG*` variable is given (Deno asks
 * permission for each one read).
 */
export function postgresConnection(url: string): {
  url: string;
  firstHost: string;
  options: PostgresConnectionOptions;
} {
  const query = url.includes("?") ? url.slice(url.indexOf("?") + 1) : "";
  const params = new URLSearchParams(query);
  const attrs = params.get("target_session_attrs");
  if (attrs !== null && !SESSION_ATTRS.includes(attrs))
    throw new Error(`target_session_attrs must be one of ${SESSION_ATTRS.join(", ")}, not '${attrs}'`);
  const targetSessionAttrs =
    attrs === "read-write" ? "primary" : attrs === null || attrs === "any" ? undefined : (attrs as TargetSessionAttrs);
  if (attrs !== null) params.delete("target_session_attrs");
  // postgres.js's own name: no prepared statements (a pooler in transaction mode is found at start anyway).
  const prepare = params.get("prepare") !== "false";
  params.delete("prepare");
  const rootCert = params.get("sslrootcert");
  params.delete("sslrootcert");
  const sslmode = params.get("sslmode") ?? params.get("ssl");
  let ssl: PostgresConnectionOptions["ssl"] = sslmode === null ? false : undefined;
  if (rootCert === "system") ssl = "verify-full";
  else if (rootCert !== null) {
    if (sslmode !== null && !["require", "verify-ca", "verify-full"].includes(sslmode))
      throw new Error(`sslrootcert needs sslmode=verify-full, verify-ca or require, not '${sslmode}'`);
    let ca: string;
    try {
      ca = readFileSync(rootCert, "utf8");
    } catch (error) {
      throw new Error(`cannot read sslrootcert ${rootCert}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
    ssl = {
      ca,
      rejectUnauthorized: true,
      ...(sslmode !== null && sslmode !== "verify-full" && { checkServerIdentity: () => undefined }),
    };
  }
  const rest = params.toString();
  return {
    url: query === "" ? url : url.slice(0, url.indexOf("?")) + (rest === "" ? "" : `?${rest}`),
    firstHost: firstHostOf(url),
    // postgres.js's types lack sslnegotiation, which it reads: given here, out of sight of the types.
    options: {
      ...(ssl !== undefined && { ssl }),
      sslnegotiation: null,
      max_pipeline: 100,
      keep_alive: 60,
      prepare,
      debug: false,
      fetch_types: true,
      publications: "alltables",
      target_session_attrs: targetSessionAttrs,
    } as PostgresConnectionOptions,
  };
}
