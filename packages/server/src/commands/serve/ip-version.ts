/** Dotted-quad IPv4 as node:net reads it: four numbers 0-255, no leading zeros. */
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)$/;
/** An IPv6 zone (`fe80::1%eth0`), which node:net accepts and the URL parser does not. */
const ZONE = /%[0-9a-zA-Z.:-]+$/;

/**
 * 4 or 6 when `text` is an IPv4 or IPv6 address, else 0: node:net's `isIP` without loading
 * node:net, whose streams cost every start of the binary a few milliseconds.
 * IPv6 is read by the URL parser (WHATWG's: what RFC 4291 writes, an embedded IPv4 too).
 */
export function ipVersion(text: string): 0 | 4 | 6 {
  if (IPV4.test(text)) return 4;
  const address = text.replace(ZONE, "");
  if (!address.includes(":") || /[^0-9a-fA-F:.]/.test(address)) return 0;
  return URL.canParse(`http://[${address}]/`) ? 6 : 0;
}
