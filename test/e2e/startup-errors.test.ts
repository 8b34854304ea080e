import { chmodSync, chownSync, copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BINARY, ensureBinary } from "./_binary.js";
import { cleanUp, cli, createKey, tempDatabaseUrl, tempDir } from "./_processes.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

/** stderr's lines other than the usage reminder a usage error adds. */
function errorLines(stderr: string): string[] {
  return stderr
    .trimEnd()
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("Usage:"));
}

/** Errors that printed a driver's text are one line that names the cause. */
describe("the binary's start-up errors", () => {
  it("names a database's missing directory instead of the driver's ConnectionFailed(...: 14)", async () => {
    const result = await cli(["serve", "--port", "0", "--db", "file:/nonexistent/dir/x.db"]);
    expect(result.code).toBe(1);
    expect(errorLines(result.stderr)).toEqual([
      "petstore: cannot open database /nonexistent/dir/x.db: the directory /nonexistent/dir does not exist",
    ]);
  }, 30_000);

  it("refuses a --host that is no address before listening (was: ENOENT ... listen)", async () => {
    for (const host of ["999.1.1.1", "1:2:3", "a b"]) {
      const result = await cli(["serve", "--host", host, "--port", "0", "--db", tempDatabaseUrl("host.db")]);
      expect(result.code).toBe(2);
      expect(errorLines(result.stderr)).toEqual([
        `petstore: --host must be an IP address or a host name, not '${host}'`,
      ]);
    }
  }, 30_000);

  it("says so in one line when TMPDIR cannot take the native driver (was: 1.5 KB of minified code)", async () => {
    // A file where a directory should be: nothing can be unpacked under it.
    const notADirectory = join(mkdtempSync(join(tmpdir(), "petstore-tmpdir-")), "file");
    writeFileSync(notADirectory, "");
    const result = await cli(["keys", "list", "--db", tempDatabaseUrl("tmpdir.db")], {
      env: { ...process.env, TMPDIR: notADirectory },
    });
    expect(result.code).toBe(1);
    const lines = errorLines(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^petstore: cannot load SQLite's driver \\(.*\\); the binary unpacks it into TMPDIR \\(${notADirectory}\\)`,
      ),
    );
  }, 30_000);

  it("refuses a malformed --db or PETSTORE_DB URL as a usage error naming it, exit 2 (was: petstore: Invalid URL, exit 1)", async () => {
    for (const [args, env, line] of [
      [
        ["--db", "postgres://petstore@db.internal:99999/petstore"],
        {},
        "petstore: --db is not a valid URL (not repeated here: it may hold a password);",
      ],
      [
        ["--db", "postgres://[db.internal/petstore"],
        {},
        "petstore: --db is not a valid URL 'postgres://[db.internal/petstore';",
      ],
      [
        [],
        { PETSTORE_DB: "postgres://petstore:pa#ss@db.internal/petstore" },
        "petstore: PETSTORE_DB is not a valid URL (not repeated here: it may hold a password);",
      ],
      [["--db", "http://a b"], {}, "petstore: --db is not a valid URL 'http://a b';"],
    ] as const) {
      for (const command of [
        ["serve", "--port", "0"],
        ["keys", "list"],
      ]) {
        const result = await cli([...command, ...args], { env: { ...process.env, ...env } });
        expect({ command, args, code: result.code }).toEqual({ command, args, code: 2 });
        const lines = errorLines(result.stderr);
        expect(lines).toHaveLength(1);
        expect(lines[0]!.startsWith(line)).toBe(true);
        expect(lines[0]).not.toContain("pa#ss");
      }
    }
  }, 60_000);

  it("names a --db directory that takes no files, instead of ConnectionFailed(... 14)", async () => {
    for (const command of [
      ["serve", "--port", "0"],
      ["keys", "create", "--plan", "free"],
    ]) {
      const result = await cli([...command, "--db", "file:/proc/x.db"]);
      expect(result.code).toBe(1);
      expect(errorLines(result.stderr)).toEqual([
        "petstore: cannot open database /proc/x.db: no file can be created in /proc (ENOENT): give a --db path in a directory for data, e.g. file:/var/lib/petstore/petstore.db",
      ]);
    }
  }, 30_000);

  it("suggests file:PATH for a --db that is a bare path", async () => {
    const result = await cli(["serve", "--db", "petstore.db"]);
    expect(result.code).toBe(2);
    expect(errorLines(result.stderr)).toEqual([
      "petstore: --db must be file:PATH, :memory:, libsql://HOST, http(s)://HOST or postgres://HOST/DATABASE, not 'petstore.db'; for a file, --db file:petstore.db",
    ]);
  }, 30_000);

  /**
   * A database another user owns printed "the database is read-only". The tests run
   * as root, who may write any file: the binary runs as `nobody` here (setpriv), on a database
   * root made, as a service user meets one that `sudo petstore keys create` made.
   */
  describe("on a database this user may not write", () => {
    let binary: string;
    // TMPDIR /tmp, where nobody may unpack the native driver whatever this run's TMPDIR is.
    const asNobody = (args: string[], cwd?: string, env: NodeJS.ProcessEnv = {}) =>
      cli(["--reuid=65534", "--regid=65534", "--clear-groups", binary, ...args], {
        executable: "setpriv",
        env: { ...process.env, TMPDIR: "/tmp", ...env },
        ...(cwd && { cwd }),
      });
    let path: string;
    beforeAll(async () => {
      const dir = tempDir();
      chmodSync(dir, 0o755);
      // A copy nobody can reach: the checkout may lie under a directory only root may enter.
      binary = join(dir, "petstore");
      copyFileSync(BINARY, binary);
      path = join(dir, "petstore.db");
      await createKey(`file:${path}`);
    });

    it("names the owner and the two fixes, for serve, keys create and keys revoke", async () => {
      // The binary is not on PATH: the command to run again is its path.
      const problem = `the database file ${path} belongs to root, and this process runs as nobody, who may not write it: run petstore as root (sudo -u root ${binary} ...), or give the files to nobody (sudo chown nobody ${path}*)`;
      const serve = await asNobody(["serve", "--host", "127.0.0.1", "--port", "0", "--db", `file:${path}`]);
      expect(serve.code).toBe(1);
      expect(errorLines(serve.stderr).filter((line) => !line.startsWith("{"))).toEqual([
        `petstore: cannot serve file:${path}: ${problem}`,
      ]);
      const create = await asNobody(["keys", "create", "--plan", "free", "--db", `file:${path}`]);
      expect([create.code, errorLines(create.stderr)]).toEqual([1, [`petstore: ${problem}`]]);
      const revoke = await asNobody(["keys", "revoke", "key_unknown", "--db", `file:${path}`]);
      expect([revoke.code, errorLines(revoke.stderr)]).toEqual([1, [`petstore: ${problem}`]]);
    }, 30_000);

    it("says chmod when its owner runs it on a file without write permission", async () => {
      const dir = tempDir();
      chmodSync(dir, 0o755);
      const own = join(dir, "petstore.db");
      await createKey(`file:${own}`);
      chownSync(dir, 65534, 65534);
      chownSync(own, 65534, 65534);
      chmodSync(own, 0o444);
      const create = await asNobody(["keys", "create", "--plan", "free", "--db", `file:${own}`]);
      expect([create.code, errorLines(create.stderr)]).toEqual([
        1,
        [`petstore: the database file ${own} is not writable (mode 444) by its owner nobody: chmod u+w ${own}`],
      ]);
    }, 30_000);

    const elsewhere = "file:/var/lib/petstore/petstore.db (sudo install -d -o nobody /var/lib/petstore makes it)";

    it("run from / without --db, says the default is petstore.db in the current directory and to name a place, never to chown /", async () => {
      const serve = await asNobody(["serve", "--host", "127.0.0.1", "--port", "0"], "/");
      expect([serve.code, errorLines(serve.stderr)]).toEqual([
        1,
        [
          `petstore: cannot open database /petstore.db: its directory / belongs to root, and this process runs as nobody, who may not write it. Without --db the database is petstore.db in the current directory, /, which is not nobody's to write: run petstore where nobody may write, or name a place, e.g. --db ${elsewhere}`,
        ],
      ]);
    }, 30_000);

    it("for a --db in a system directory, says to give --db another file, never to chown it or to run as root", async () => {
      const create = await asNobody(["keys", "create", "--plan", "free", "--db", "file:/usr/petstore.db"]);
      expect([create.code, errorLines(create.stderr)]).toEqual([
        1,
        [
          `petstore: cannot open database /usr/petstore.db: its directory /usr belongs to root, and this process runs as nobody, who may not write it, and /usr is not nobody's to write: give --db a file in a directory nobody may write, e.g. --db ${elsewhere}`,
        ],
      ]);
    }, 30_000);

    it("says so in PETSTORE_DB's own form when the variable named the database", async () => {
      const etc = await asNobody(["serve", "--host", "127.0.0.1", "--port", "0"], "/", {
        PETSTORE_DB: "file:/etc/petstore.db",
      });
      expect(etc.code).toBe(1);
      expect(errorLines(etc.stderr)).toEqual([
        `petstore: cannot open database /etc/petstore.db: its directory /etc belongs to root, and this process runs as nobody, who may not write it, and /etc is not nobody's to write: give PETSTORE_DB a file in a directory nobody may write, e.g. PETSTORE_DB=${elsewhere}`,
      ]);
    }, 30_000);
  });

  it("documents PETSTORE_DB_BUSY_TIMEOUT_MS in serve --help", async () => {
    const result = await cli(["serve", "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("PETSTORE_DB_BUSY_TIMEOUT_MS=N");
  }, 30_000);
});
