import { describe, expect, it } from "vitest";
import { addressBucket, clientAddress, trustedProxies } from "./client-address.js";

const withForwardedFor = (value?: string) =>
  new Request("http://localhost/v1/pets", value === undefined ? {} : { headers: { "X-Forwarded-For": value } });

describe("trustedProxies", () => {
  it("matches IPv4 addresses inside a CIDR range and no others", () => {
    const trusted = trustedProxies(["10.0.0.0/8", "192.168.1.0/24"]);
    for (const inside of ["10.0.0.0", "10.1.2.3", "10.255.255.255", "192.168.1.77"]) expect(trusted(inside), inside).toBe(true);
    for (const outside of ["11.0.0.1", "9.255.255.255", "192.168.2.1", "192.168.0.255"]) expect(trusted(outside), outside).toBe(false);
  });

  it("treats a bare address as a range of exactly that address", () => {
    const trusted = trustedProxies(["203.0.113.5", "2001:db8::1"]);
    expect(trusted("203.0.113.5")).toBe(true);
    expect(trusted("203.0.113.6")).toBe(false);
    expect(trusted("2001:db8::1")).toBe(true);
    expect(trusted("2001:db8::2")).toBe(false);
  });

  it("matches IPv6 addresses in any notation inside a CIDR range", () => {
    const trusted = trustedProxies(["2001:db8::/32", "::1"]);
    for (const inside of ["2001:db8::5", "2001:0db8:0000:0000:0000:0000:0000:0005", "2001:DB8:ffff::", "[2001:db8::9]", "::1", "0:0:0:0:0:0:0:1"]) {
      expect(trusted(inside), inside).toBe(true);
    }
    for (const outside of ["2001:db9::1", "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "::2", "::"]) expect(trusted(outside), outside).toBe(false);
  });

  it("keeps IPv4 and IPv6 ranges apart, but reads an IPv4-mapped IPv6 address as IPv4", () => {
    const v4 = trustedProxies(["0.0.0.0/0"]);
    const v6 = trustedProxies(["::/0"]);
    expect(v4("198.51.100.1")).toBe(true);
    expect(v4("2001:db8::1")).toBe(false);
    expect(v6("2001:db8::1")).toBe(true);
    expect(v6("198.51.100.1")).toBe(false);
    expect(trustedProxies(["10.0.0.0/8"])("::ffff:10.9.8.7")).toBe(true);
  });

  it("honours prefixes that do not fall on a byte or group boundary", () => {
    const trusted = trustedProxies(["172.16.0.0/12", "2001:db8:8000::/33"]);
    expect(trusted("172.31.255.255")).toBe(true);
    expect(trusted("172.32.0.0")).toBe(false);
    expect(trusted("2001:db8:ffff::1")).toBe(true);
    expect(trusted("2001:db8:7fff::1")).toBe(false);
  });

  it("never trusts something that is not an IP address", () => {
    const trusted = trustedProxies(["0.0.0.0/0", "::/0"]);
    for (const bad of ["", "unknown", "localhost", "256.1.1.1", "1.2.3", "1.2.3.4.5", "1::2::3", "1:2:3:4:5:6:7", "12345::", "fe80::1%eth0", "1.2.3.4:80"]) {
      expect(trusted(bad), bad).toBe(false);
    }
  });

  it("throws on a malformed range, so bad configuration fails at start", () => {
    for (const bad of ["10.0.0.0/33", "::/129", "10.0.0.0/-1", "10.0.0.0/x", "10.0.0.0/", "10.0.0.0/8/9", "10.0.0.0/0x8", "10.0.0.0/1e1", "10.0.0.0/ 8", "300.0.0.0/8", "example.com", "", "1::2::3/64"]) {
      expect(() => trustedProxies([bad]), bad).toThrow(TypeError);
    }
  });
});

describe("clientAddress", () => {
  const proxies = trustedProxies(["10.0.0.0/8", "2001:db8:ffff::/48"]);

  it("is the socket address when no proxy is trusted, whatever X-Forwarded-For says", () => {
    expect(clientAddress(withForwardedFor("1.1.1.1"), "10.0.0.1", undefined)).toBe("10.0.0.1");
  });

  it("ignores X-Forwarded-For sent by an untrusted peer", () => {
    expect(clientAddress(withForwardedFor("1.1.1.1"), "198.51.100.9", proxies)).toBe("198.51.100.9");
  });

  it("takes the rightmost hop that is not a trusted proxy, since clients can prepend anything", () => {
    const request = withForwardedFor("6.6.6.6, 203.0.113.7, 10.0.0.3");
    expect(clientAddress(request, "10.0.0.1", proxies)).toBe("203.0.113.7");
  });

  it("reads IPv6 hops and trusted IPv6 proxies", () => {
    const request = withForwardedFor("2001:db8::77, 2001:db8:ffff::2");
    expect(clientAddress(request, "2001:db8:ffff::1", proxies)).toBe("2001:db8::77");
  });

  it("joins repeated X-Forwarded-For headers and skips empty hops", () => {
    const headers = new Headers();
    headers.append("X-Forwarded-For", "203.0.113.7");
    headers.append("X-Forwarded-For", " , 10.0.0.4,");
    expect(clientAddress(new Request("http://localhost/v1/pets", { headers }), "10.0.0.1", proxies)).toBe("203.0.113.7");
  });

  it("takes the leftmost hop when every hop is a trusted proxy", () => {
    expect(clientAddress(withForwardedFor("10.0.0.9, 10.0.0.3"), "10.0.0.1", proxies)).toBe("10.0.0.9");
  });

  it("is the trusted socket address when there is no X-Forwarded-For", () => {
    expect(clientAddress(withForwardedFor(), "10.0.0.1", proxies)).toBe("10.0.0.1");
    expect(clientAddress(withForwardedFor(""), "10.0.0.1", proxies)).toBe("10.0.0.1");
  });

  it("is 'unknown' when the host gave no socket address", () => {
    expect(clientAddress(withForwardedFor("1.1.1.1"), undefined, proxies)).toBe("unknown");
    expect(clientAddress(withForwardedFor("1.1.1.1"), undefined, undefined)).toBe("unknown");
  });
});

describe("addressBucket", () => {
  it("keeps an IPv4 address whole, mapped or not", () => {
    expect(addressBucket("203.0.113.7")).toBe("203.0.113.7");
    expect(addressBucket("::ffff:203.0.113.7")).toBe("203.0.113.7");
  });

  it("puts every IPv6 address of one /64 in one bucket", () => {
    expect(addressBucket("2001:db8:1:2::1")).toBe("2001:0db8:0001:0002::/64");
    expect(addressBucket("2001:db8:1:2:ffff:ffff:ffff:ffff")).toBe("2001:0db8:0001:0002::/64");
    expect(addressBucket("2001:db8:1:3::1")).toBe("2001:0db8:0001:0003::/64");
    expect(addressBucket("::1")).toBe("0000:0000:0000:0000::/64");
  });

  it("leaves what is not an address as it is", () => {
    expect(addressBucket("unknown")).toBe("unknown");
  });
});
