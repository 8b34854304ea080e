import { describe, expect, it } from "vitest";
import { type CommandSpec, parseArgs } from "./parse-args.js";
import { UsageError } from "./usage-error.js";

const spec: CommandSpec = { name: "demo", flags: { port: "value", json: "switch" }, positionals: ["id"] };

function failure(argv: string[]): string {
  try {
    parseArgs(argv, spec);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`parseArgs accepted ${argv.join(" ")}`);
}

describe("parseArgs", () => {
  it("reads --flag value, --flag=value, switches and positionals in any order", () => {
    expect(parseArgs(["--port", "80", "abc", "--json"], spec)).toEqual({
      values: { port: "80" },
      switches: new Set(["json"]),
      positionals: ["abc"],
    });
    expect(parseArgs(["abc", "--port=8080"], spec).values).toEqual({ port: "8080" });
  });

  it("keeps an empty value given with =", () => {
    expect(parseArgs(["abc", "--port="], spec).values).toEqual({ port: "" });
  });

  it("treats everything after -- as positional", () => {
    expect(parseArgs(["--", "--json"], spec).positionals).toEqual(["--json"]);
  });

  it("names an unknown flag and the command", () => {
    expect(failure(["abc", "--prot", "80"])).toBe("unknown flag --prot for 'petstore demo'");
    expect(failure(["abc", "-p"])).toBe("unknown flag -p for 'petstore demo'");
  });

  it("refuses a flag without its value, also when another flag follows", () => {
    expect(failure(["abc", "--port"])).toBe("--port needs a value");
    expect(failure(["abc", "--port", "--json"])).toBe("--port needs a value");
  });

  it("refuses a value given to a switch and a flag given twice", () => {
    expect(failure(["abc", "--json=yes"])).toBe("--json takes no value");
    expect(failure(["abc", "--port", "1", "--port", "2"])).toBe("--port is given more than once");
  });

  it("refuses missing and extra positionals", () => {
    expect(failure([])).toBe("missing <id> for 'petstore demo'");
    expect(failure(["a", "b"])).toBe("unexpected argument 'b' for 'petstore demo'");
  });

  it("accepts --help and -h on its own, whatever else is missing", () => {
    expect(parseArgs(["--help"], spec).switches.has("help")).toBe(true);
    expect(parseArgs(["-h"], spec).switches.has("help")).toBe(true);
  });

  it("takes a value that starts with a single dash, and a value given with = that starts with two", () => {
    expect(parseArgs(["abc", "--port", "-5"], spec).values).toEqual({ port: "-5" });
    expect(parseArgs(["abc", "--port=--x"], spec).values).toEqual({ port: "--x" });
  });
});
