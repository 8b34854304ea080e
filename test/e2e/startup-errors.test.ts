import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinary } from "./_binary.js";
import { cleanUp, cli, tempDatabaseUrl } from "./_processes.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

/** stderr's lines other than the usage reminder a usage error adds. */
function errorLines(stderr: string): string[] {
  return stderr
    .trimEnd()
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("Usage:"));
}

/** Issue 19 §6: errors that printed a driver's text are one line that names the cause. */
describe("the binary's start-up errors", () => {
  it("names a database's missing directory instead of the driver's ConnectionFailed(...: 14)", async () => {
    const result = await cli(["serve", "--port", "0", "--db", "file:/nonexistent/dir/x.db"]);
    expect(result.code).toBe(1);
    expect(errorLines(result.stderr)).toEqual(["petstore: cannot open database /nonexistent/dir/x.db: the directory /nonexistent/dir does not exist"]);
  }, 30_000);

  it("refuses a --host that is no address before listening (was: ENOENT ... listen)", async () => {
    for (const host of ["999.1.1.1", "1:2:3", "a b"]) {
      const result = await cli(["serve", "--host", host, "--port", "0", "--db", tempDatabaseUrl("host.db")]);
      expect(result.code).toBe(2);
      expect(errorLines(result.stderr)).toEqual([`petstore: --host must be an IP address or a host name, not '${host}'`]);
    }
  }, 30_000);

  it("says so in one line when TMPDIR cannot take the native driver (was: 1.5 KB of minified code)", async () => {
    // A file where a directory should be: nothing can be unpacked under it.
    const notADirectory = join(mkdtempSync(join(tmpdir(), "petstore-tmpdir-")), "file");
    writeFileSync(notADirectory, "");
    const result = await cli(["keys", "list", "--db", tempDatabaseUrl("tmpdir.db")], { env: { ...process.env, TMPDIR: notADirectory } });
    expect(result.code).toBe(1);
    const lines = errorLines(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^petstore: cannot load SQLite's driver \\(.*\\); the binary unpacks it into TMPDIR \\(${notADirectory}\\)`));
  }, 30_000);

  it("refuses a malformed --db or PETSTORE_DB URL as a usage error naming it, exit 2 (was: petstore: Invalid URL, exit 1)", async () => {
    for (const [args, env, line] of [
      [["--db", "postgres://petstore@db.internal:99999/petstore"], {}, "petstore: --db is not a valid URL (not repeated here: it may hold a password);"],
      [["--db", "postgres://[db.internal/petstore"], {}, "petstore: --db is not a valid URL 'postgres://[db.internal/petstore';"],
      [[], { PETSTORE_DB: "postgres://petstore:pa#ss@db.internal/petstore" }, "petstore: PETSTORE_DB is not a valid URL (not repeated here: it may hold a password);"],
      [["--db", "http://a b"], {}, "petstore: --db is not a valid URL 'http://a b';"],
    ] as const) {
      for (const command of [["serve", "--port", "0"], ["keys", "list"]]) {
        const result = await cli([...command, ...args], { env: { ...process.env, ...env } });
        expect({ command, args, code: result.code }).toEqual({ command, args, code: 2 });
        const lines = errorLines(result.stderr);
        expect(lines).toHaveLength(1);
        expect(lines[0]!.startsWith(line)).toBe(true);
        expect(lines[0]).not.toContain("pa#ss");
      }
    }
  }, 60_000);

  it("documents PETSTORE_DB_BUSY_TIMEOUT_MS in serve --help", async () => {
    const result = await cli(["serve", "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("PETSTORE_DB_BUSY_TIMEOUT_MS=N");
  }, 30_000);
});
