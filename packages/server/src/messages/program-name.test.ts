import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { programName } from "./program-name.js";

const root = mkdtempSync(join(tmpdir(), "petstore-program-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** An executable file at `path`. */
function executable(path: string): string {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, "");
  chmodSync(path, 0o755);
  return path;
}

/** The compiled binary at `path`: its own executable, no script. */
const compiled = (path: string) => ({ executable: path, script: undefined });

describe("the program a message tells the user to run", () => {
  let binary: string;
  beforeAll(() => {
    binary = executable(join(root, "opt", "petstore"));
  });

  it("is the binary's name when PATH finds this very binary by it", () => {
    expect(programName({ PATH: `/nonexistent:${join(root, "opt")}` }, compiled(binary))).toBe("petstore");
  });

  it("is petstore when PATH holds a link of that name to a binary named otherwise", () => {
    const released = executable(join(root, "release", "petstore-linux-x64"));
    mkdirSync(join(root, "bin"));
    symlinkSync(released, join(root, "bin", "petstore"));
    expect(programName({ PATH: join(root, "bin") }, compiled(released))).toBe("petstore");
  });

  it("is the binary's path when PATH does not find it", () => {
    expect(programName({ PATH: "/usr/bin:/bin" }, compiled(binary))).toBe(binary);
    expect(programName({}, compiled(binary))).toBe(binary);
  });

  it("is the binary's path when another petstore comes first on PATH", () => {
    const other = executable(join(root, "other", "petstore"));
    expect(programName({ PATH: `${join(root, "other")}:${join(root, "opt")}` }, compiled(binary))).toBe(binary);
    expect(programName({ PATH: join(root, "opt") }, compiled(other))).toBe(other);
  });

  it("quotes a path a shell would split", () => {
    const spaced = executable(join(root, "my tools", "petstore"));
    expect(programName({ PATH: "" }, compiled(spaced))).toBe(`'${spaced}'`);
  });

  it("is the checkout's npm script when the source runs (npm start, npm run start:deno)", () => {
    const entry = "/home/me/petstore/packages/server/src/main.ts";
    for (const runtime of ["/usr/bin/bun", "/home/me/petstore/node_modules/bun/bin/bun.exe", "/usr/bin/deno"])
      expect(programName({}, { executable: runtime, script: entry })).toBe("npm run petstore --");
  });

  it("is petstore for anything else a runtime runs (a test runner, a copy of the bundle)", () => {
    expect(programName({}, { executable: "/usr/bin/node", script: "/home/me/petstore/node_modules/.bin/vitest" })).toBe(
      "petstore",
    );
    expect(programName({}, { executable: "/usr/bin/bun", script: "/srv/petstore.js" })).toBe("petstore");
    expect(programName({}, { executable: undefined, script: undefined })).toBe("petstore");
  });

  it("reads nothing Deno's --allow-env withholds as given", () => {
    const withheld = new Proxy<Record<string, string | undefined>>(
      {},
      {
        get: () => {
          throw new Error("NotCapable");
        },
      },
    );
    expect(programName(withheld, compiled(binary))).toBe(binary);
  });
});
