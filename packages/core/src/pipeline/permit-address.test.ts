import { describe, expect, it } from "vitest";
import { trustedProxies } from "../http/ip-addresses.js";
import type { ApiKeyRecord } from "../ports.js";
import { permitAddressStage } from "./permit-address.js";

const key = (allowFrom?: string[], accountAllowFrom?: string[]): ApiKeyRecord => ({
  id: "key_a",
  accountId: "acct_a",
  hash: "0".repeat(64),
  plan: "free",
  createdAt: 0,
  ...(allowFrom && { allowFrom }),
  account: { plan: "free", ...(accountAllowFrom && { allowFrom: accountAllowFrom }) },
});
const request = (forwardedFor?: string) =>
  new Request("http://api/v1/pets", forwardedFor === undefined ? {} : { headers: { "X-Forwarded-For": forwardedFor } });
const notAllowed = (address: string) =>
  expect.objectContaining({
    status: 403,
    code: "address_not_allowed",
    message: `This API key is not allowed from the address ${address}`,
  });

describe("permitAddress", () => {
  const permit = permitAddressStage({ isTrustedProxy: undefined });
  const limited = key(["127.0.0.2/32", "2001:db8::/32"]);

  it("lets a key without ranges through from any address", () => {
    expect(() => permit(request(), { clientAddress: "198.51.100.7" }, key())).not.toThrow();
  });

  it("lets a key with ranges through from inside them, IPv4 and IPv6", () => {
    for (const clientAddress of ["127.0.0.2", "2001:db8::5", "::ffff:127.0.0.2"])
      expect(() => permit(request(), { clientAddress }, limited), clientAddress).not.toThrow();
  });

  it("answers 403 address_not_allowed from outside them, naming the address", () => {
    expect(() => permit(request(), { clientAddress: "127.0.0.1" }, limited)).toThrow(notAllowed("127.0.0.1"));
    expect(() => permit(request(), { clientAddress: "2001:db9::1" }, limited)).toThrow(notAllowed("2001:db9::1"));
  });

  it("refuses a key with ranges when the host gave no address", () => {
    expect(() => permit(request(), undefined, limited)).toThrow(notAllowed("unknown"));
  });

  it("refuses a key in an account with ranges from outside the account's, the key having none", () => {
    const inAccount = key(undefined, ["127.0.0.2/32", "2001:db8::/32"]);
    for (const clientAddress of ["127.0.0.2", "2001:db8::5", "::ffff:127.0.0.2"])
      expect(() => permit(request(), { clientAddress }, inAccount), clientAddress).not.toThrow();
    expect(() => permit(request(), { clientAddress: "127.0.0.1" }, inAccount)).toThrow(notAllowed("127.0.0.1"));
  });

  it("lets a key with ranges in an account with ranges through only from inside both", () => {
    const both = key(["10.0.0.0/8"], ["10.1.0.0/16", "192.0.2.0/24"]);
    expect(() => permit(request(), { clientAddress: "10.1.2.3" }, both)).not.toThrow();
    expect(() => permit(request(), { clientAddress: "10.2.0.1" }, both)).toThrow(notAllowed("10.2.0.1"));
    expect(() => permit(request(), { clientAddress: "192.0.2.1" }, both)).toThrow(notAllowed("192.0.2.1"));
  });

  it("asks nothing of a request without a caller (a public route)", () => {
    expect(() => permit(request(), { clientAddress: "127.0.0.1" }, undefined)).not.toThrow();
  });

  it("reads X-Forwarded-For only from a trusted proxy", () => {
    const behindProxy = permitAddressStage({ isTrustedProxy: trustedProxies(["127.0.0.1/32"]) });
    expect(() => behindProxy(request("127.0.0.2"), { clientAddress: "127.0.0.1" }, limited)).not.toThrow();
    expect(() => behindProxy(request("10.1.1.1"), { clientAddress: "127.0.0.1" }, limited)).toThrow(
      notAllowed("10.1.1.1"),
    );
    expect(() => permit(request("127.0.0.2"), { clientAddress: "127.0.0.1" }, limited)).toThrow(
      notAllowed("127.0.0.1"),
    );
  });
});
