import { describe, expect, it } from "vitest";
import type { ApiKeyRecord, Decision } from "../ports.js";
import { authorize } from "./authorize.js";
import type { RouteMatch } from "./find-route.js";

const caller: ApiKeyRecord = { id: "key_a", hash: "0".repeat(64), plan: "free", createdAt: 0 };
const pets: RouteMatch = { route: { path: "/pets", methods: {} }, params: {} };
const document: RouteMatch = { route: { path: "/openapi.json", methods: {}, public: true }, params: {} };
/** The limiter's decision at `now`: its instant is the one expiries and rolls are checked at. */
const at = (now: number): Decision => ({ allowed: true, windows: [], now });
const unauthorized = (challenge: string) =>
  expect.objectContaining({ status: 401, code: "unauthorized", headers: { "WWW-Authenticate": challenge } });

describe("authorize", () => {
  it("lets a caller with a valid key through to any path, known or not", () => {
    expect(authorize({ caller, keyCache: "hit" }, pets, at(0))).toBe(caller);
    expect(authorize({ caller, keyCache: "miss" }, undefined, at(0))).toBe(caller);
  });

  it("answers 401 with a plain Bearer challenge when no key was sent, also for an unknown path", () => {
    for (const match of [pets, undefined]) {
      expect(() => authorize({ caller: undefined, sentKey: false }, match, at(0))).toThrow(
        unauthorized('Bearer realm="petstore"'),
      );
    }
  });

  it("adds error=invalid_token when a bearer token was sent but is not valid", () => {
    expect(() => authorize({ caller: undefined, sentKey: true }, pets, at(0))).toThrow(
      unauthorized('Bearer realm="petstore", error="invalid_token"'),
    );
  });

  it("refuses an expired key from its expiry on, at the limiter's instant, cached or not", () => {
    const expiring = { ...caller, expiresAt: 5_000 };
    expect(authorize({ caller: expiring, keyCache: "hit" }, pets, at(4_999))).toBe(expiring);
    expect(() => authorize({ caller: expiring, keyCache: "hit" }, pets, at(5_000))).toThrow(
      expect.objectContaining({
        status: 401,
        message: "The API key has expired",
        headers: { "WWW-Authenticate": 'Bearer realm="petstore", error="invalid_token"' },
      }),
    );
    expect(authorize({ caller: expiring, keyCache: "hit" }, document, at(5_000))).toBeUndefined();
  });

  it("lets a rolled key's old secret through until the overlap ends, and its new one after", () => {
    const rolled = { ...caller, rolled: { previousHash: "1".repeat(64), at: 1_000, until: 61_000 } };
    expect(authorize({ caller: rolled, keyCache: "hit", oldSecret: true }, pets, at(60_999))).toBe(rolled);
    expect(() => authorize({ caller: rolled, keyCache: "hit", oldSecret: true }, pets, at(61_000))).toThrow(
      expect.objectContaining({ status: 401, code: "unauthorized" }),
    );
    expect(authorize({ caller: rolled, keyCache: "hit" }, pets, at(61_000))).toBe(rolled);
  });

  it("needs no key on a public route", () => {
    expect(authorize({ caller: undefined, sentKey: true }, document, at(0))).toBeUndefined();
  });
});
