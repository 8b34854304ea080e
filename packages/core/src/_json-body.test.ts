import { describe, expect, it } from "vitest";
import { readJsonBody, repeatedMember } from "./_json-body.js";

const request = (body: string, contentType = "application/json") =>
  new Request("http://test/", { method: "POST", body, headers: { "Content-Type": contentType } });

describe("repeatedMember", () => {
  it("finds none in objects whose members are all different, nested or in arrays", () => {
    for (const text of ['{"a":1,"b":{"a":2}}', '[{"a":1},{"a":2}]', '{"a":"\\"a\\":1,","b":["a","a"]}', "{}", "[]"])
      expect(repeatedMember(text), text).toBeUndefined();
  });

  it("names a member given twice by its path", () => {
    expect(repeatedMember('{"plan":"free","plan":"enterprise"}')).toBe("plan");
    expect(repeatedMember('{"a":{"b":1, "b" :2}}')).toBe("a.b");
    expect(repeatedMember('{"list":[{"x":1},{"x":1,"x":2}]}')).toBe("list.1.x");
  });

  it("compares names as JSON reads them: an escape and its character are one name", () => {
    expect(repeatedMember('{"a":1,"\\u0061":2}')).toBe("a");
  });
});

describe("readJsonBody", () => {
  it("reads UTF-8 JSON, with or without its charset named", async () => {
    expect(await readJsonBody(request('{"a":1}'), 1_000)).toEqual({ a: 1 });
    expect(await readJsonBody(request('{"a":1}', 'application/json; charset="UTF-8"'), 1_000)).toEqual({ a: 1 });
  });

  it("refuses another charset with 415 unsupported_media_type", async () => {
    await expect(readJsonBody(request('{"a":1}', "application/json; charset=utf-16"), 1_000)).rejects.toMatchObject({
      code: "unsupported_media_type",
      message: expect.stringContaining("charset=utf-16"),
    });
  });

  it("refuses a repeated member with 400 invalid_body naming it", async () => {
    await expect(readJsonBody(request('{"plan":"free","plan":"pro"}'), 1_000)).rejects.toMatchObject({
      code: "invalid_body",
      details: [{ path: "plan", message: "is given more than once" }],
    });
  });
});
