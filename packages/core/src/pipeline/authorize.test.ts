import { memoryAdapters } from "@petstore/adapters/memory";
import { describe, expect, it } from "vitest";
import { resolveOptions } from "../options.js";
import type { ApiKeyRecord } from "../ports.js";
import { authorizeStage } from "./authorize.js";
import type { RouteMatch } from "./find-route.js";

const caller: ApiKeyRecord = { id: "key_a", hash: "0".repeat(64), plan: "free", createdAt: 0 };
const pets: RouteMatch = { route: { path: "/pets", methods: {} }, params: {} };
const document: RouteMatch = { route: { path: "/openapi.json", methods: {}, public: true }, params: {} };
const authorize = authorizeStage(resolveOptions(memoryAdapters()));
const unauthorized = (challenge: string) => expect.objectContaining({ status: 401, code: "unauthorized", headers: { "WWW-Authenticate": challenge } });

describe("authorizeStage", () => {
  it("lets a caller with a valid key through to any path, known or not", () => {
    expect(authorize({ caller, keyCache: "hit" }, pets)).toBe(caller);
    expect(authorize({ caller, keyCache: "miss" }, undefined)).toBe(caller);
  });

  it("answers 401 with a plain Bearer challenge when no key was sent, also for an unknown path", () => {
    for (const match of [pets, undefined]) {
      expect(() => authorize({ caller: undefined, sentKey: false }, match)).toThrow(unauthorized('Bearer realm="petstore"'));
    }
  });

  it("adds error=invalid_token when a bearer token was sent but is not valid", () => {
    expect(() => authorize({ caller: undefined, sentKey: true }, pets)).toThrow(unauthorized('Bearer realm="petstore", error="invalid_token"'));
  });

  it("needs no key on a public route", () => {
    expect(authorize({ caller: undefined, sentKey: true }, document)).toBeUndefined();
  });
});
