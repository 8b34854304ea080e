import { isIP } from "node:net";
import { expect, it } from "vitest";
import { ipVersion } from "./ip-version.js";

it("reads addresses as node:net's isIP does", () => {
  const samples = [
    "0.0.0.0",
    "127.0.0.1",
    "255.255.255.255",
    "256.1.1.1",
    "999.1.1.1",
    "01.2.3.4",
    "1.2.3",
    "1.2.3.4.5",
    "1.2.3.4 ",
    " 1.2.3.4",
    "1.2.3.-4",
    "::",
    "::1",
    "1:2:3",
    "1:2:3:4:5:6:7:8",
    "1:2:3:4:5:6:7:8:9",
    "1::2::3",
    "fe80::1",
    "fe80::1%eth0",
    "fe80::1%25",
    "::ffff:1.2.3.4",
    "::ffff:1.2.3.256",
    "[::1]",
    "2001:db8::",
    "2001:DB8::abcd",
    "g::1",
    "12345::",
    ":::",
    "1:2:3:4:5:6:1.2.3.4",
    "localhost",
    "example.com",
    "a b",
    "",
    ":",
    "1.2.3.4:80",
    "%eth0",
  ];
  for (const sample of samples) expect([sample, ipVersion(sample)]).toEqual([sample, isIP(sample)]);
});
