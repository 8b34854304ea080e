import { describe, expect, it } from "vitest";
import { cidrProblem, trustedProxies } from "./ip-addresses.js";

/** `ranges` trust every address `inside` and none `outside`. */
function expectTrusted(ranges: string[], { inside, outside }: { inside: string[]; outside: string[] }) {
  const trusted = trustedProxies(ranges);
  for (const address of inside) expect(trusted(address), address).toBe(true);
  for (const address of outside) expect(trusted(address), address).toBe(false);
}

describe("trustedProxies", () => {
  it("matches IPv4 addresses inside a CIDR range and no others", () => {
    expectTrusted(["10.0.0.0/8", "192.168.1.0/24"], {
      inside: ["10.0.0.0", "10.1.2.3", "10.255.255.255", "192.168.1.77"],
      outside: ["11.0.0.1", "9.255.255.255", "192.168.2.1", "192.168.0.255"],
    });
  });

  it("treats a bare address as a range of exactly that address", () => {
    expectTrusted(["203.0.113.5", "2001:db8::1"], {
      inside: ["203.0.113.5", "2001:db8::1"],
      outside: ["203.0.113.6", "2001:db8::2"],
    });
  });

  it("matches IPv6 addresses in any notation inside a CIDR range", () => {
    expectTrusted(["2001:db8::/32", "::1"], {
      inside: [
        "2001:db8::5",
        "2001:0db8:0000:0000:0000:0000:0000:0005",
        "2001:DB8:ffff::",
        "[2001:db8::9]",
        "::1",
        "0:0:0:0:0:0:0:1",
      ],
      outside: ["2001:db9::1", "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "::2", "::"],
    });
  });

  it("keeps IPv4 and IPv6 ranges apart, but reads an IPv4-mapped IPv6 address as IPv4", () => {
    expectTrusted(["0.0.0.0/0"], { inside: ["198.51.100.1"], outside: ["2001:db8::1"] });
    expectTrusted(["::/0"], { inside: ["2001:db8::1"], outside: ["198.51.100.1"] });
    expectTrusted(["10.0.0.0/8"], { inside: ["::ffff:10.9.8.7"], outside: [] });
  });

  it("honours prefixes that do not fall on a byte or group boundary", () => {
    expectTrusted(["172.16.0.0/12", "2001:db8:8000::/33"], {
      inside: ["172.31.255.255", "2001:db8:ffff::1"],
      outside: ["172.32.0.0", "2001:db8:7fff::1"],
    });
  });

  it("never trusts something that is not an IP address", () => {
    expectTrusted(["0.0.0.0/0", "::/0"], {
      inside: [],
      outside: [
        "",
        "unknown",
        "localhost",
        "256.1.1.1",
        "1.2.3",
        "1.2.3.4.5",
        "1::2::3",
        "1:2:3:4:5:6:7",
        "12345::",
        "fe80::1%eth0",
        "1.2.3.4:80",
      ],
    });
  });

  it("throws on a malformed range, so bad configuration fails at start", () => {
    for (const bad of [
      "10.0.0.0/33",
      "::/129",
      "10.0.0.0/-1",
      "10.0.0.0/x",
      "10.0.0.0/",
      "10.0.0.0/8/9",
      "10.0.0.0/0x8",
      "10.0.0.0/1e1",
      "10.0.0.0/ 8",
      "300.0.0.0/8",
      "example.com",
      "",
      "1::2::3/64",
    ]) {
      expect(() => trustedProxies([bad]), bad).toThrow(TypeError);
    }
  });
});

describe("cidrProblem", () => {
  it("accepts IPv4 and IPv6 ranges and bare addresses", () => {
    for (const good of ["10.0.0.0/8", "127.0.0.2/32", "2001:db8::/32", "::/0", "203.0.113.5", "::1"])
      expect(cidrProblem(good), good).toBeUndefined();
  });

  it("names a prefix past /32 or /128", () => {
    expect(cidrProblem("10.0.0.0/33")).toBe("'10.0.0.0/33' has a prefix past /32, the longest an IPv4 range has");
    expect(cidrProblem("2001:db8::/129")).toBe(
      "'2001:db8::/129' has a prefix past /128, the longest an IPv6 range has",
    );
  });

  it("names what is no range at all", () => {
    for (const bad of ["10.0.0/8", "10.0.0.0/", "any", "", "10.0.0.0/8/9"])
      expect(cidrProblem(bad), bad).toBe(`'${bad}' is not an IP address or CIDR range`);
  });
});
