import { describe, expect, it } from "vitest";
import type { ApiError } from "../errors.js";
import type { ApiKeyRecord } from "../ports.js";
import { authorize } from "./authorize.js";
import type { RouteMatch } from "./route.js";

const caller: ApiKeyRecord = { id: "key_a", hash: "0".repeat(64), plan: "free", createdAt: 0 };
const pets: RouteMatch = { route: { path: "/pets", methods: {} }, params: {} };
const document: RouteMatch = { route: { path: "/openapi.json", methods: {}, public: true }, params: {} };

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    return error as ApiError;
  }
  throw new Error("not refused");
}

describe("authorize", () => {
  it("lets a caller with a valid key through to any path, known or not", () => {
    expect(authorize({ caller, keyCache: "hit" }, pets)).toBe(caller);
    expect(authorize({ caller, keyCache: "miss" }, undefined)).toBe(caller);
  });

  it("answers 401 with a plain Bearer challenge when no key was sent, also for an unknown path", () => {
    for (const match of [pets, undefined]) {
      const error = refusal(() => authorize({ caller: undefined, sentKey: false }, match));
      expect([error.status, error.code, error.headers]).toEqual([401, "unauthorized", { "WWW-Authenticate": 'Bearer realm="petstore"' }]);
    }
  });

  it("adds error=invalid_token when a bearer token was sent but is not valid", () => {
    const error = refusal(() => authorize({ caller: undefined, sentKey: true }, pets));
    expect(error.headers).toEqual({ "WWW-Authenticate": 'Bearer realm="petstore", error="invalid_token"' });
  });

  it("needs no key on a public route", () => {
    expect(authorize({ caller: undefined, sentKey: true }, document)).toBeUndefined();
  });
});
