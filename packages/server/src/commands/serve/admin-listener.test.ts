import { describe, expect, it } from "vitest";
import { adminHosts } from "./admin-listener.js";

describe("adminHosts", () => {
  it("answers a loopback listener by any loopback address and localhost, a tunnel's near end included", () => {
    const allowed = adminHosts("127.0.0.1", []);
    for (const host of ["127.0.0.1", "localhost", "[::1]", "127.0.0.2"]) expect(allowed(host), host).toBe(true);
    for (const host of ["evil.example", "192.0.2.1", "localhost.evil.example"]) expect(allowed(host), host).toBe(false);
  });

  it("answers a listener on one address by that address and the names given only", () => {
    const allowed = adminHosts("192.0.2.10", ["admin.example.internal"]);
    expect(["192.0.2.10", "admin.example.internal"].map(allowed)).toEqual([true, true]);
    expect(["192.0.2.11", "localhost", "evil.example"].map(allowed)).toEqual([false, false, false]);
  });

  it("answers a wildcard listener by any address, never by a name not given", () => {
    const allowed = adminHosts("0.0.0.0", ["ops.example"]);
    expect(["192.0.2.11", "[2001:db8::1]", "ops.example"].map(allowed)).toEqual([true, true, true]);
    expect(allowed("evil.example")).toBe(false);
    expect(adminHosts("::1", [])("[::1]")).toBe(true);
  });
});
