import { describe, expect, it } from "vitest";
import { requestIdOf } from "./request-id.js";

const withId = (id?: string) =>
  new Request("http://petstore.test/v1/pets", id === undefined ? {} : { headers: { "X-Request-Id": id } });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("requestIdOf", () => {
  it("echoes an incoming id of 1 to 128 visible ASCII characters", () => {
    for (const id of ["a", "trace-42", "~!#", "x".repeat(128)]) expect(requestIdOf(withId(id))).toBe(id);
  });

  it("makes a new UUID when none was sent, or one too long or with invisible characters", () => {
    for (const id of [undefined, "x".repeat(129), "two words", "tab\there", "é"]) {
      const made = requestIdOf(withId(id));
      expect(made, String(id)).toMatch(UUID);
    }
    expect(requestIdOf(withId())).not.toBe(requestIdOf(withId()));
  });
});
