import { describe, expect, it } from "vitest";
import { trustedProxies } from "./ip-addresses.js";
import { addressBucket, clientAddress } from "./client-address.js";

const withForwardedFor = (value?: string) =>
  new Request("http://localhost/v1/pets", value === undefined ? {} : { headers: { "X-Forwarded-For": value } });

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
    expect(clientAddress(new Request("http://localhost/v1/pets", { headers }), "10.0.0.1", proxies)).toBe(
      "203.0.113.7",
    );
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
