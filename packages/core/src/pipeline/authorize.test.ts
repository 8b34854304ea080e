import { describe, expect, it } from "vitest";
import type { ApiKeyRecord } from "../ports.js";
import { authorize } from "./authorize.js";
import type { RouteMatch } from "../routes.js";

const caller: ApiKeyRecord = { id: "key_a", accountId: "acct_a", hash: "0".repeat(64), plan: "free", createdAt: 0 };
const pets: RouteMatch = { route: { path: "/pets", methods: {} }, params: {} };
const document: RouteMatch = { route: { path: "/openapi.json", methods: {}, public: true }, params: {} };
const unauthorized = (challenge: string, message?: string) =>
  expect.objectContaining({
    status: 401,
    code: "unauthorized",
    headers: { "WWW-Authenticate": challenge },
    ...(message !== undefined && { message }),
  });
const INVALID = 'Bearer realm="petstore", error="invalid_token"';
const refused = (reason: "revoked" | "expired" | "rolled_out") =>
  ({ caller: undefined, sentKey: true, keyCache: "miss", refused: { keyId: "key_a", reason } }) as const;

describe("authorize", () => {
  it("lets a caller with a valid key through to any path, known or not", () => {
    expect(authorize({ caller, keyCache: "hit" }, pets)).toBe(caller);
    expect(authorize({ caller, keyCache: "miss" }, undefined)).toBe(caller);
  });

  it("answers 401 with a plain Bearer challenge when no key was sent, also for an unknown path", () => {
    for (const match of [pets, undefined]) {
      expect(() => authorize({ caller: undefined, sentKey: false }, match)).toThrow(
        unauthorized('Bearer realm="petstore"', "An API key is required: send Authorization: Bearer <key>"),
      );
    }
  });

  it("adds error=invalid_token when a bearer token was sent but is not valid", () => {
    expect(() => authorize({ caller: undefined, sentKey: true }, pets)).toThrow(
      unauthorized(INVALID, "The API key is not valid"),
    );
  });

  it("says why a key it knows is refused: revoked, expired, or a secret a roll replaced", () => {
    expect(() => authorize(refused("revoked"), pets)).toThrow(unauthorized(INVALID, "The API key has been revoked"));
    expect(() => authorize(refused("expired"), pets)).toThrow(unauthorized(INVALID, "The API key has expired"));
    expect(() => authorize(refused("rolled_out"), pets)).toThrow(
      unauthorized(INVALID, "This secret of the API key was replaced when the key was rolled: use the new one"),
    );
  });

  it("needs no key on a public route", () => {
    expect(authorize({ caller: undefined, sentKey: true }, document)).toBeUndefined();
    expect(authorize(refused("expired"), document)).toBeUndefined();
  });
});
