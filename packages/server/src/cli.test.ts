import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./cli.js";
import type { Env } from "./commands/_command.js";

const dir = mkdtempSync(join(tmpdir(), "petstore-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(argv: string[], env: Env = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, env, { out: (line) => out.push(line), err: (line) => err.push(line) });
  return { code, out: out.join("\n"), err };
}

describe("petstore command line", () => {
  it("prints the version", async () => {
    expect(await cli(["--version"])).toEqual({ code: 0, out: `petstore 1.0.0 (run from source: commit unknown, node ${process.versions.node}, ${process.platform}-${process.arch})`, err: [] });
  });

  it("lists every command in --help, and explains each flag in <command> --help", async () => {
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    for (const command of ["petstore serve", "petstore keys create", "petstore keys list", "petstore keys revoke", "petstore backup"]) {
      expect(help.out).toContain(command);
    }
    const create = await cli(["keys", "create", "--help"]);
    expect(create.code).toBe(0);
    for (const flag of ["--plan", "--per-minute", "--per-day", "--label", "--db", "--json"]) expect(create.out).toContain(flag);
  });

  it.each([
    [["serve", "--prot", "80"], "petstore: unknown flag --prot for 'petstore serve'", "Usage: petstore serve "],
    [["serve", "--port", "http"], "petstore: --port must be a whole number from 0 to 65535, not 'http'", "Usage: petstore serve "],
    [["serve", "--port", "65536"], "petstore: --port must be a whole number from 0 to 65535, not '65536'", "Usage: petstore serve "],
    [["serve", "--db", "petstore.db"], "petstore: --db must be file:PATH, :memory:, libsql://HOST, http(s)://HOST or postgres://HOST/DATABASE, not 'petstore.db'; for a file, --db file:petstore.db", "Usage: petstore serve "],
    [["keys", "list", "--db", "./data/petstore.db"], "petstore: --db must be file:PATH, :memory:, libsql://HOST, http(s)://HOST or postgres://HOST/DATABASE, not './data/petstore.db'; for a file, --db file:./data/petstore.db", "Usage: petstore keys list "],
    [["serve", "--db", "mysql://db/petstore"], "petstore: --db must be file:PATH, :memory:, libsql://HOST, http(s)://HOST or postgres://HOST/DATABASE, not 'mysql://db/petstore'", "Usage: petstore serve "],
    [["serve", "--metrics-listen", "9464"], "petstore: --metrics-listen must be HOST:PORT (e.g. 127.0.0.1:9464), not '9464'", "Usage: petstore serve "],
    [["serve", "--metrics-listen", "127.0.0.1:99999"], "petstore: --metrics-listen's port must be a whole number from 0 to 65535, not '99999'", "Usage: petstore serve "],
    [["backup", "--out"], "petstore: --out needs a value", "Usage: petstore backup "],
    [["backup", "--out", "x.db", "--compress"], "petstore: unknown flag --compress for 'petstore backup'", "Usage: petstore backup "],
    [["serve", "--trust-proxy", "10.0.0.0/33"], "petstore: --trust-proxy: Not an IP address or CIDR range: '10.0.0.0/33'", "Usage: petstore serve "],
    [["keys", "create"], "petstore: --plan is required (free, pro, business or enterprise)", "Usage: petstore keys create "],
    [["keys", "create", "--plan", "gold"], "petstore: --plan must be one of free, pro, business, enterprise, not 'gold'", "Usage: petstore keys create "],
    [["keys", "create", "--plan", "enterprise", "--per-minute", "5"], "petstore: --plan enterprise needs --per-minute and --per-day", "Usage: petstore keys create "],
    [["keys", "create", "--plan", "pro", "--per-day", "0"], "petstore: --per-day must be a whole number from 1 to 1000000000, not '0'", "Usage: petstore keys create "],
    [["keys", "revoke"], "petstore: missing <id> for 'petstore keys revoke'", "Usage: petstore keys revoke "],
    [["keys", "rotate"], "petstore: unknown command 'keys rotate'", "Usage: petstore serve | keys create"],
    [["--verbose"], "petstore: unknown flag --verbose", "Usage: petstore serve | keys create"],
  ])("exits 2 on %j with one line naming the mistake and a usage hint", async (argv, message, hint) => {
    const { code, out, err } = await cli(argv);
    expect(code).toBe(2);
    expect(out).toBe("");
    expect(err).toHaveLength(2);
    expect(err[0]).toBe(message);
    expect(err[1]).toContain(hint);
  });

  it("names the environment variable when its value is wrong, and lets a flag win over it", async () => {
    const { code, err } = await cli(["serve"], { PETSTORE_PORT: "eighty" });
    expect(code).toBe(2);
    expect(err[0]).toBe("petstore: PETSTORE_PORT must be a whole number from 0 to 65535, not 'eighty'");
    const path = await cli(["keys", "list"], { PETSTORE_DB: "petstore.db" });
    expect(path.err[0]).toBe("petstore: PETSTORE_DB must be file:PATH, :memory:, libsql://HOST, http(s)://HOST or postgres://HOST/DATABASE, not 'petstore.db'; for a file, PETSTORE_DB=file:petstore.db");
    const bad = await cli(["keys", "create", "--plan", "free", "--db", "file:" + join(dir, "flag.db")], { PETSTORE_DB: "nonsense" });
    expect(bad.code).toBe(0);
  });

  it("creates keys, lists them without key material, and revokes them", async () => {
    const db = `file:${join(dir, "keys.db")}`;
    const created = await cli(["keys", "create", "--plan", "pro", "--per-minute", "7", "--label", "ci bot", "--json"], { PETSTORE_DB: db });
    expect(created.code).toBe(0);
    const key = JSON.parse(created.out);
    expect(key).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^psk_/),
      plan: "pro",
      perMinute: 7,
      perDay: 10_000,
      label: "ci bot",
      database: join(dir, "keys.db"),
      databaseCreated: true,
    });

    const readable = await cli(["keys", "create", "--plan", "free", "--db", db]);
    expect(readable.out).toMatch(/^Created API key key_\w+ \(plan free: 60 requests\/minute, 1000 requests\/day\)\.$/m);
    expect(readable.out.split("\n")[1]).toBe(`Stored in the database ${join(dir, "keys.db")}.`);
    expect(readable.out).toMatch(/^ {4}psk_\w{38}$/m);
    expect(readable.out).toContain("only time the key is shown");

    const listed = await cli(["keys", "list", "--db", db, "--json"]);
    const rows = JSON.parse(listed.out) as Record<string, unknown>[];
    expect(rows).toHaveLength(2);
    expect(rows[0]).toEqual({ id: key.id, plan: "pro", perMinute: 7, perDay: 10_000, label: "ci bot", createdAt: expect.any(String), revokedAt: null });
    const table = await cli(["keys", "list", "--db", db]);
    for (const output of [listed.out, table.out]) {
      expect(output).not.toContain("psk_");
      expect(output).not.toMatch(/[0-9a-f]{64}/);
    }
    expect(table.out.split("\n")[0]).toMatch(/^ID\s+PLAN\s+PER-MINUTE\s+PER-DAY\s+CREATED\s+REVOKED\s+LABEL$/);

    expect(await cli(["keys", "revoke", key.id, "--db", db])).toMatchObject({ code: 0, out: `Revoked ${key.id}. Servers refuse it within 5 seconds.` });
    const after = JSON.parse((await cli(["keys", "list", "--db", db, "--json"])).out) as { revokedAt: string | null }[];
    expect(after[0]!.revokedAt).toEqual(expect.any(String));
    // Again: said so, with the first revocation's time, which stays.
    expect(await cli(["keys", "revoke", key.id, "--db", db])).toEqual({ code: 0, out: `${key.id} was already revoked at ${after[0]!.revokedAt}; nothing changed.`, err: [] });
    const still = JSON.parse((await cli(["keys", "list", "--db", db, "--json"])).out) as { revokedAt: string | null }[];
    expect(still[0]!.revokedAt).toBe(after[0]!.revokedAt);
  });

  it("names the database a key went to, and says when it made that database", async () => {
    const path = join(dir, "new", "..", "fresh.db");
    const first = await cli(["keys", "create", "--plan", "free", "--db", `file:${path}`]);
    expect(first.code).toBe(0);
    expect(first.out.split("\n")[1]).toBe(
      `Stored in a new database, ${join(dir, "fresh.db")}: there was none at that path. A server on another database answers this key 401: give its database with --db (or PETSTORE_DB).`,
    );
    const second = await cli(["keys", "create", "--plan", "free", "--json"], { PETSTORE_DB: `file:${join(dir, "fresh.db")}` });
    expect(JSON.parse(second.out)).toMatchObject({ database: join(dir, "fresh.db"), databaseCreated: false });
  });

  it("refuses --db :memory: for keys create, whose key would be gone when the command ends", async () => {
    for (const env of [{}, { PETSTORE_DB: ":memory:" }]) {
      const { code, out, err } = await cli(["keys", "create", "--plan", "free", ...(Object.keys(env).length ? [] : ["--db", ":memory:"])], env);
      expect({ code, out }).toEqual({ code: 2, out: "" });
      expect(err[0]).toBe(
        "petstore: --db :memory: would lose the key when this command ends: give the database the server uses (a :memory: server takes its key from PETSTORE_BOOTSTRAP_KEY, see 'petstore serve --help')",
      );
    }
  });

  it("lists the keys commands on 'keys --help'", async () => {
    const { code, out } = await cli(["keys", "--help"]);
    expect(code).toBe(0);
    expect(out).toContain("petstore keys create --plan");
    expect(out).toContain("petstore keys revoke <id>");
  });

  it("exits 1 when revoking an id no key has", async () => {
    const empty = join(dir, "empty.db");
    expect((await cli(["keys", "create", "--plan", "free", "--db", `file:${empty}`])).code).toBe(0);
    const { code, err } = await cli(["keys", "revoke", "key_nobody", "--db", `file:${empty}`]);
    expect(code).toBe(1);
    expect(err).toEqual(["petstore: no API key has the id 'key_nobody' (see 'petstore keys list')"]);
  });

  it("refuses to list or revoke keys of a database that does not exist, creating none", async () => {
    const typo = join(dir, "petstroe.db");
    for (const argv of [["keys", "list"], ["keys", "revoke", "key_x"]]) {
      const { code, out, err } = await cli([...argv, "--db", `file:${typo}`]);
      expect({ code, out, err }).toEqual({ code: 1, out: "", err: [`petstore: no database at ${typo} (is the path right? 'petstore serve' or 'petstore keys create' makes one)`] });
    }
    expect(existsSync(typo)).toBe(false);
  });

  it("exits 1 with the reason when the database cannot be opened", async () => {
    const { code, err } = await cli(["keys", "list", "--db", `file:${join(dir, "no-such-dir", "x.db")}`]);
    expect(code).toBe(1);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(/^petstore: /);
  });

  it("refuses to serve on Node.js, which has no built-in fetch server", async () => {
    const { code, err } = await cli(["serve", "--db", ":memory:", "--port", "0", "--host", "127.0.0.1"]);
    expect(code).toBe(1);
    expect(err.at(-1)).toBe("petstore: cannot listen on 127.0.0.1 port 0: petstore serve needs Bun or Deno (Node.js has no built-in fetch server)");
  });
});
