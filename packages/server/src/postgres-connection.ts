/**
 * The URL and the postgres.js options for a `--db postgres://...` URL written as libpq users
 * write it, including several hosts (`postgres://h1:5432,h2:5432/db`, which `new URL` cannot
 * read) and these parameters:
 * - `target_session_attrs`: `read-write` (libpq: not a standby, and not read-only), `primary`,
 *   `read-only`, `standby`, `prefer-standby`, `any`. postgres.js tells a standby from a primary
 *   by `in_hot_standby` only for `primary`; its `read-write` looks at
 *   `default_transaction_read_only` alone, which a standby reports `off`, so a pool would settle
 *   on a standby and fail every write: `read-write` is handed over as `primary`.
 * - `sslmode`: as postgres.js reads it (`disable`, `prefer`, `require`, `verify-full`); without
 *   it, no TLS.
 * Every option postgres.js would otherwise read from a `PG*` variable is given (Deno asks
 * permission for each one read).
 */
export function postgresConnection(url: string): { url: string; options: Record<string, unknown> } {
  const query = url.includes("?") ? url.slice(url.indexOf("?") + 1) : "";
  const params = new URLSearchParams(query);
  const attrs = params.get("target_session_attrs");
  const targetSessionAttrs = attrs === "read-write" ? "primary" : attrs === "any" ? undefined : (attrs ?? undefined);
  if (attrs !== null) params.delete("target_session_attrs");
  const rest = params.toString();
  return {
    url: query === "" ? url : url.slice(0, url.indexOf("?")) + (rest === "" ? "" : `?${rest}`),
    options: {
      ...(params.has("sslmode") || params.has("ssl") ? {} : { ssl: false }),
      sslnegotiation: null,
      max_pipeline: 100,
      keep_alive: 60,
      prepare: true,
      debug: false,
      fetch_types: true,
      publications: "alltables",
      target_session_attrs: targetSessionAttrs,
    },
  };
}
