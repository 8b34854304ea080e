/**
 * `HOST`, `HOST:PORT`, `[IPv6]` or `[IPv6]:PORT` split into the host (without brackets) and the
 * port's digits when given; undefined for any other text. Every address a flag or URL names
 * (`--admin-listen`, a Redis node, a PostgreSQL host) is read by it; each caller says what a
 * missing port means and which ports it takes.
 * @example hostPort("[::1]:6379") // { host: "::1", port: "6379" }
 */
export function hostPort(text: string): { host: string; port: string | undefined } | undefined {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]+))(?::(\d+))?$/.exec(text);
  if (match === null) return undefined;
  return { host: (match[1] ?? match[2])!, port: match[3] };
}
