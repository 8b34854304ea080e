/**
 * IPv4 and IPv6 addresses and CIDR ranges: the `trustProxy` option's ranges, read where the
 * options are, a key's allowlist, and the addresses the client-address stage compares with them.
 */

type Cidr = { bits: bigint; prefix: number; width: number };

/** An address as a number of `width` bits (IPv4-mapped IPv6 as IPv4); undefined when it is none. */
export function parseIp(text: string): { value: bigint; width: number } | undefined {
  const ip = text
    .trim()
    .replace(/^\[|\]$/g, "")
    .replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, "$1");
  if (/^\d+\.\d+\.\d+\.\d+$/.test(ip)) {
    const parts = ip.split(".").map(Number);
    if (parts.some((p) => p > 255)) return undefined;
    return { value: parts.reduce((acc, p) => (acc << 8n) | BigInt(p), 0n), width: 32 };
  }
  if (!ip.includes(":") || !/^[0-9a-f:]+$/i.test(ip)) return undefined;
  const [head = "", tail, extra] = ip.split("::");
  if (extra !== undefined) return undefined;
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const missing = 8 - left.length - right.length;
  if ((tail === undefined && missing !== 0) || missing < 0) return undefined;
  const groups = [...left, ...Array<string>(tail === undefined ? 0 : missing).fill("0"), ...right];
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return undefined;
  return { value: groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n), width: 128 };
}

/** A range, or why `text` is none: a problem that names it, as a usage error says it. */
function parseCidr(text: string): Cidr | string {
  const [address = "", prefixText, extra] = text.split("/");
  const ip = parseIp(address);
  // Digits only: Number("") is 0, so "10.0.0.0/" would otherwise match every address.
  const prefix =
    prefixText === undefined ? ip?.width : /^[0-9]{1,3}$/.test(prefixText) ? Number(prefixText) : undefined;
  if (!ip || extra !== undefined || prefix === undefined) return `'${text}' is not an IP address or CIDR range`;
  if (prefix > ip.width)
    return `'${text}' has a prefix past /${ip.width}, the longest an IPv${ip.width === 32 ? 4 : 6} range has`;
  const shift = BigInt(ip.width - prefix);
  return { bits: ip.value >> shift, prefix, width: ip.width };
}

/** Why `text` is neither an address nor a CIDR range (IPv4 or IPv6); undefined when it is one. */
export function cidrProblem(text: string): string | undefined {
  const range = parseCidr(text);
  return typeof range === "string" ? range : undefined;
}

/**
 * A predicate over addresses: inside one of `cidrs` (an IPv4-mapped IPv6 address as its IPv4
 * address). Throws a `TypeError` on a malformed range, so bad configuration fails at start.
 */
export function addressRanges(cidrs: readonly string[]): (address: string) => boolean {
  const ranges = cidrs.map((text) => {
    const range = parseCidr(text);
    if (typeof range === "string") throw new TypeError(range);
    return range;
  });
  return (address) => {
    const ip = parseIp(address);
    if (!ip) return false;
    return ranges.some((r) => r.width === ip.width && ip.value >> BigInt(r.width - r.prefix) === r.bits);
  };
}

/**
 * The `trustProxy` option's predicate: whether a socket's address is a proxy whose
 * `X-Forwarded-For` is believed. Throws a `TypeError` naming a malformed range.
 */
export function trustedProxies(cidrs: readonly string[]): (address: string) => boolean {
  return addressRanges(cidrs);
}
