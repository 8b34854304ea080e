import { describe, expect, it } from "vitest";
import type { ApiKeyRecord } from "../ports.js";
import type { Routed } from "./choose-handler.js";
import { requireScope } from "./require-scope.js";

const handler = async () => new Response();
const readOnly: ApiKeyRecord = {
  id: "key_a",
  accountId: "acct_a",
  hash: "0".repeat(64),
  plan: "free",
  createdAt: 0,
  scopes: ["pets:read", "orders:read"],
};
const everything: ApiKeyRecord = { id: "key_b", accountId: "acct_b", hash: "1".repeat(64), plan: "free", createdAt: 0 };
const routed = (scope?: Routed["scope"]): Routed => ({ handler, params: {}, ...(scope && { scope }) });

describe("requireScope", () => {
  it("lets a key through to an operation whose scope it has", () => {
    expect(() => requireScope(routed("pets:read"), readOnly)).not.toThrow();
  });

  it("gives a key without scopes of its own every scope", () => {
    expect(() => requireScope(routed("pets:write"), everything)).not.toThrow();
  });

  it("answers 403 insufficient_scope with the Bearer challenge naming the scope needed", () => {
    expect(() => requireScope(routed("pets:write"), readOnly)).toThrow(
      expect.objectContaining({
        status: 403,
        code: "insufficient_scope",
        headers: { "WWW-Authenticate": 'Bearer error="insufficient_scope", scope="pets:write"' },
      }),
    );
  });

  it("asks nothing for an operation that needs no scope", () => {
    expect(() => requireScope(routed(), readOnly)).not.toThrow();
    expect(() => requireScope(routed(), undefined)).not.toThrow();
  });
});
