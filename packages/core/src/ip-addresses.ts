/**
 * The client address that names an anonymous caller's rate-limit bucket: the socket address
 * from the host, or, only when that socket is a trusted proxy, the nearest untrusted hop of
 * `X-Forwarded-For` (read from the right, since clients can prepend anything).
 */

type Cidr = { bits: bigint; prefix: number; width: number };

function parseIp(text: string): { value: bigint; width: number } | undefined {
  const ip = text.trim().replace(/^\[|\]$/g, "").replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, "$1");
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

function parseCidr(text: string): Cidr {
  const [address = "", prefixText, extra] = text.split("/");
  const ip = parseIp(address);
  // Digits only: Number("") is 0, so "10.0.0.0/" would otherwise trust every address.
  const prefix = prefixText === undefined ? ip?.width : /^[0-9]{1,3}$/.test(prefixText) ? Number(prefixText) : undefined;
  if (!ip || extra !== undefined || prefix === undefined || prefix > ip.width) {
    throw new TypeError(`Not an IP address or CIDR range: '${text}'`);
  }
  const shift = BigInt(ip.width - prefix);
  return { bits: ip.value >> shift, prefix, width: ip.width };
}

/** A predicate over addresses; throws on a malformed range so bad configuration fails at start. */
export function trustedProxies(cidrs: readonly string[]): (address: string) => boolean {
  const ranges = cidrs.map(parseCidr);
  return (address) => {
    const ip = parseIp(address);
    if (!ip) return false;
    return ranges.some((r) => r.width === ip.width && ip.value >> BigInt(r.width - r.prefix) === r.bits);
  };
}

export function clientAddress(
  request: Request,
  socketAddress: string | undefined,
  isTrusted: ((address: string) => boolean) | undefined,
): string {
  const socket = socketAddress ?? "unknown";
  if (!isTrusted || !isTrusted(socket)) return socket;
  const hops = (request.headers.get("x-forwarded-for") ?? "").split(",").map((h) => h.trim()).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!isTrusted(hops[i]!)) return hops[i]!;
  }
  return hops[0] ?? socket;
}

/**
 * The rate-limit bucket of an anonymous client address. An IPv6 client usually holds a whole
 * /64, so one bucket per address would hand it 2^64 fresh buckets (and a way out of a ban):
 * IPv6 addresses share one bucket per /64. IPv4 addresses (mapped ones too) stay whole.
 */
export function addressBucket(address: string): string {
  const ip = parseIp(address);
  if (!ip) return address;
  if (ip.width === 32) return [24, 16, 8, 0].map((shift) => Number((ip.value >> BigInt(shift)) & 255n)).join(".");
  return `${(ip.value >> 64n).toString(16).padStart(16, "0").replace(/(.{4})(?!$)/g, "$1:")}::/64`;
}
