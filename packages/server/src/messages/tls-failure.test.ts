import { describe, expect, it } from "vitest";
import { tlsFailure } from "./tls-failure.js";

const failure = (message: string, code?: string) =>
  Object.assign(new Error(message), code === undefined ? {} : { code });

describe("tlsFailure", () => {
  it("names TLS for a certificate refused, by its code, also as a cause", () => {
    expect(tlsFailure(failure("unable to verify the first certificate", "UNABLE_TO_VERIFY_LEAF_SIGNATURE"))).toBe(
      "TLS: unable to verify the first certificate (UNABLE_TO_VERIFY_LEAF_SIGNATURE)",
    );
    const wrapped = new Error("Redis failed", {
      cause: failure("Hostname/IP does not match certificate's altnames", "ERR_TLS_CERT_ALTNAME_INVALID"),
    });
    expect(tlsFailure(wrapped)).toMatch(/^TLS: Hostname\/IP does not match/);
  });

  it("leaves other failures alone", () => {
    expect(tlsFailure(failure("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"))).toBeUndefined();
    expect(tlsFailure("a string")).toBeUndefined();
  });
});
