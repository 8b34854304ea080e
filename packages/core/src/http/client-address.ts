import { parseIp } from "./ip-addresses.js";

/** What the host knows about the connection. */
export interface ClientInfo {
  /**
   * The socket's remote address; names the rate-limit bucket of anonymous callers. Without it
   * they all share one bucket, `ip:unknown`, and the first such request logs one warning.
   */
  clientAddress?: string | undefined;
}

/**
 * The client address that names an anonymous caller's rate-limit bucket: the socket address
 * from the host, or, only when that socket is a trusted proxy, the nearest untrusted hop of
 * `X-Forwarded-For` (read from the right, since clients can prepend anything).
 */
export function clientAddress(
  request: Request,
  socketAddress: string | undefined,
  isTrusted: ((address: string) => boolean) | undefined,
): string {
  const socket = socketAddress ?? "unknown";
  if (!isTrusted?.(socket)) return socket;
  const hops = (request.headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((h) => h.trim())
    .filter(Boolean);
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
  return `${(ip.value >> 64n)
    .toString(16)
    .padStart(16, "0")
    .replace(/(.{4})(?!$)/g, "$1:")}::/64`;
}
