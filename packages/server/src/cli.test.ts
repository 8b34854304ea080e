import { keyBucket, ownAccountId } from "@petstore/core";
import type { WindowPair } from "@petstore/core";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { hostname, tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS_ON_AN_EXISTING_DATABASE, cliInProcess } from "../../../test/_support/cli-in-process.js";
import type { Decision } from "@petstore/core";
import type { Env } from "./commands/_command.js";
import { openStorage } from "./storage/open-storage.js";

/**
 * Command lines with one mistake each, in cli-mistakes.json: what the first line of stderr says
 * of it, and the usage line the second line starts with.
 */
const MISTAKES: { argv: string[]; says: string; usage: string }[] = JSON.parse(
  readFileSync(join(import.meta.dirname, "cli-mistakes.json"), "utf8"),
);

const dir = mkdtempSync(join(tmpdir(), "petstore-cli-"));
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = (argv: string[], env: Env = {}, program = "petstore") => cliInProcess(argv, env, program);
/** What a command that failed (exit 1) answers: nothing on stdout, `message` alone on stderr. */
const failedSaying = (message: string) => ({ code: 1, out: "", err: [message] });

describe("petstore command line", () => {
  it("prints the version", async () => {
    expect(await cli(["--version"])).toEqual({
      code: 0,
      out: `petstore 1.0.0 (run from source: commit unknown, node ${process.versions.node}, ${process.platform}-${process.arch})`,
      err: [],
    });
  });

  it("lists every command in --help, and explains each flag in <command> --help", async () => {
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    const commands = [
      "serve",
      "keys create",
      "keys list",
      "keys show",
      "keys usage",
      "keys update",
      "keys roll",
      "keys revoke",
      "keys unban",
      "audit",
      "admin-tokens create",
      "admin-tokens list",
      "admin-tokens revoke",
      "backup",
      "restore",
    ];
    for (const command of commands) {
      expect(help.out).toContain(`\n  petstore ${command}`);
      const own = await cli([...command.split(" "), "--help"]);
      expect(own.code).toBe(0);
      // Every flag of its synopsis is explained below it.
      const [usage, explained] = own.out.split("\n\n", 2) as [string, string];
      for (const flag of usage.match(/--[a-z-]+/g) ?? [])
        expect(own.out.slice(usage.length), `${command} ${flag}`).toContain(flag);
      expect(explained).not.toBe("");
    }
    // docs/binary.md's synopsis is the commands' own.
    const synopsis = readFileSync(join(import.meta.dirname, "../../../docs/binary.md"), "utf8");
    for (const line of help.out
      .split("\n")
      .filter((line) => line.startsWith("  petstore ") && !line.includes("--version") && !line.includes("<command>"))) {
      expect(synopsis).toContain(`\n${line.trim()}\n`);
    }
    const create = await cli(["keys", "create", "--help"]);
    expect(create.code).toBe(0);
    for (const flag of ["--plan", "--per-minute", "--per-day", "--label", "--expires", "--db", "--json"])
      expect(create.out).toContain(flag);
  });

  it("exits 2 on an expiry in the past, naming the instant it is now", async () => {
    const { code, err } = await cli(["keys", "create", "--plan", "free", "--expires", "2020-01-01T00:00:00Z"]);
    expect(code).toBe(2);
    expect(err[0]).toMatch(/^petstore: --expires must be in the future, not 2020-01-01T00:00:00\.000Z \(it is 20\d\d-/);
    expect(err[1]).toContain("Usage: petstore keys create ");
  });

  it.each(MISTAKES)(
    "exits 2 on $argv with one line naming the mistake and a usage hint",
    async ({ argv, says, usage }) => {
      const { code, out, err } = await cli(argv);
      expect(code).toBe(2);
      expect(out).toBe("");
      expect(err).toHaveLength(2);
      expect(err[0]).toEqual(says);
      expect(err[1]).toContain(usage);
    },
  );

  it("names the environment variable when its value is wrong, and lets a flag win over it", async () => {
    const { code, err } = await cli(["serve"], { PETSTORE_PORT: "eighty" });
    expect(code).toBe(2);
    expect(err[0]).toBe("petstore: PETSTORE_PORT must be a whole number from 0 to 65535, not 'eighty'");
    const path = await cli(["keys", "list"], { PETSTORE_DB: "petstore.db" });
    expect(path.err[0]).toBe(
      "petstore: PETSTORE_DB must be file:PATH, :memory:, libsql://HOST, http(s)://HOST or postgres://HOST/DATABASE, not 'petstore.db'; for a file, PETSTORE_DB=file:petstore.db",
    );
    const bad = await cli(["keys", "create", "--plan", "free", "--db", `file:${join(dir, "flag.db")}`], {
      PETSTORE_DB: "nonsense",
    });
    expect(bad.code).toBe(0);
  });

  const MUST = "must be file:PATH, :memory:, libsql://HOST, http(s)://HOST or postgres://HOST/DATABASE, not";
  const OTHER_TOOLS = "that is another tool's URL of a SQLite file, and petstore's is file:PATH:";
  it.each([
    [
      "sqlite:petstore.db",
      `--db ${MUST} 'sqlite:petstore.db'; ${OTHER_TOOLS} for petstore.db in the current directory, --db file:petstore.db`,
    ],
    [
      "sqlite://petstore.db",
      `--db ${MUST} 'sqlite://petstore.db'; ${OTHER_TOOLS} for petstore.db in the current directory, --db file:petstore.db`,
    ],
    [
      "sqlite3:data/petstore.db",
      `--db ${MUST} 'sqlite3:data/petstore.db'; ${OTHER_TOOLS} for data/petstore.db in the current directory, --db file:data/petstore.db`,
    ],
    [
      "sqlite:///srv/petstore.db",
      `--db ${MUST} 'sqlite:///srv/petstore.db'; ${OTHER_TOOLS} for /srv/petstore.db, --db file:/srv/petstore.db (SQLAlchemy reads sqlite:/// as relative: for srv/petstore.db in the current directory, --db file:srv/petstore.db)`,
    ],
    ["sqlite::memory:", `--db ${MUST} 'sqlite::memory:'; for a database in memory, --db :memory:`],
    [
      "file://petstore.db",
      "--db file://petstore.db names petstore.db as a host, and a file: URL takes none: for petstore.db in the current directory, --db file:petstore.db; for /petstore.db, --db file:/petstore.db (or file:///petstore.db)",
    ],
    [
      "file://data/petstore.db",
      "--db file://data/petstore.db names data as a host, and a file: URL takes none: for data/petstore.db in the current directory, --db file:data/petstore.db; for /data/petstore.db, --db file:/data/petstore.db (or file:///data/petstore.db)",
    ],
  ])("says what --db %s means and what to type instead (exit 2)", async (value, message) => {
    for (const command of [["serve"], ["keys", "list"]]) {
      const { code, err } = await cli([...command, "--db", value]);
      expect([code, err[0]]).toEqual([2, `petstore: ${message}`]);
    }
  });

  it("gives the same hint for PETSTORE_DB in the variable's own form", async () => {
    const { code, err } = await cli(["keys", "list"], { PETSTORE_DB: "sqlite://petstore.db" });
    expect([code, err[0]]).toEqual([
      2,
      `petstore: PETSTORE_DB ${MUST} 'sqlite://petstore.db'; ${OTHER_TOOLS} for petstore.db in the current directory, PETSTORE_DB=file:petstore.db`,
    ]);
  });

  it("creates keys, lists them without key material, and revokes them", async () => {
    const db = `file:${join(dir, "keys.db")}`;
    const created = await cli(["keys", "create", "--plan", "pro", "--per-minute", "7", "--label", "ci bot", "--json"], {
      PETSTORE_DB: db,
    });
    expect(created.code).toBe(0);
    const key = JSON.parse(created.out);
    expect(key).toEqual({
      id: expect.stringMatching(/^key_/),
      accountId: expect.stringMatching(/^acct_/),
      key: expect.stringMatching(/^psk_/),
      plan: "pro",
      perMinute: 7,
      perDay: 10_000,
      label: "ci bot",
      createdAt: expect.stringMatching(ISO),
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
      scopes: ["pets:read", "pets:write", "orders:read"],
      allowFrom: null,
      rolling: null,
      usage: {
        minute: { used: 0, limit: 7, resetAt: expect.stringMatching(ISO) },
        day: { used: 0, limit: 10_000, resetAt: expect.stringMatching(ISO) },
        bannedUntil: null,
      },
      states: ["active"],
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
    // The objects keys show --json prints, as keys create printed them (without the key and where it went).
    const { key: secret, database, databaseCreated, ...view } = key;
    expect(rows[0]).toEqual(view);
    expect(JSON.parse((await cli(["keys", "show", key.id, "--db", db, "--json"])).out)).toEqual(view);
    const table = await cli(["keys", "list", "--db", db]);
    for (const output of [listed.out, table.out]) {
      expect(output).not.toContain("psk_");
      expect(output).not.toMatch(/[0-9a-f]{64}/);
    }
    expect(table.out.split("\n")[0]).toMatch(
      /^ID\s+STATE\s+PLAN\s+PER-MINUTE\s+PER-DAY\s+TODAY\s+CREATED\s+EXPIRES\s+LAST-USED\s+ROLLING-UNTIL\s+BANNED-UNTIL\s+REVOKED\s+SCOPES\s+ALLOW-FROM\s+LABEL$/,
    );
    expect(table.out.split("\n")[1]).toMatch(
      new RegExp(
        `^${key.id}\\s+active\\s+pro\\s+7\\s+10000\\s+0/10000\\s+\\S+Z\\s+-\\s+-\\s+-\\s+-\\s+-\\s+all\\s+any\\s+ci bot$`,
      ),
    );
    expect(table.out).not.toContain(secret);

    expect(await cli(["keys", "revoke", key.id, "--db", db])).toMatchObject({
      code: 0,
      out: `Revoked ${key.id}. Servers refuse it within 5 seconds.`,
    });
    const after = JSON.parse((await cli(["keys", "list", "--db", db, "--json"])).out) as { revokedAt: string | null }[];
    expect(after[0]!.revokedAt).toEqual(expect.any(String));
    // Again: said so, with the first revocation's time, which stays.
    expect(await cli(["keys", "revoke", key.id, "--db", db])).toEqual({
      code: 0,
      out: `${key.id} was already revoked at ${after[0]!.revokedAt}; nothing changed.`,
      err: [],
    });
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
    const second = await cli(["keys", "create", "--plan", "free", "--json"], {
      PETSTORE_DB: `file:${join(dir, "fresh.db")}`,
    });
    expect(JSON.parse(second.out)).toMatchObject({ database: join(dir, "fresh.db"), databaseCreated: false });
  });

  it("refuses --db :memory: for keys create, whose key would be gone when the command ends", async () => {
    for (const env of [{}, { PETSTORE_DB: ":memory:" }]) {
      const { code, out, err } = await cli(
        ["keys", "create", "--plan", "free", ...(Object.keys(env).length ? [] : ["--db", ":memory:"])],
        env,
      );
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

  describe("run from a checkout, where no petstore is on PATH (npm run petstore -- ...)", () => {
    const npm = "npm run petstore --";

    it("names the commands it points to as npm runs them", async () => {
      const empty = join(dir, "npm.db");
      expect((await cli(["keys", "create", "--plan", "free", "--db", `file:${empty}`])).code).toBe(0);
      const { err } = await cli(["keys", "revoke", "key_nobody", "--db", `file:${empty}`], {}, npm);
      expect(err).toEqual(["petstore: no API key has the id 'key_nobody' (see 'npm run petstore -- keys list')"]);
      const missing = join(dir, "npm-missing.db");
      expect((await cli(["audit", "--db", `file:${missing}`], {}, npm)).err).toEqual([
        `petstore: no database at ${missing} (is the path right? 'npm run petstore -- serve', 'npm run petstore -- keys create' or 'npm run petstore -- admin-tokens create' makes one)`,
      ]);
    });

    it("gives the usage hint as npm runs it", async () => {
      const { code, err } = await cli(["keys", "create", "--plan", "gold"], {}, npm);
      expect(code).toBe(2);
      expect(err[1]).toMatch(
        /^Usage: npm run petstore -- keys create --plan free\|pro.* \(see 'npm run petstore -- keys create --help'\)$/,
      );
      expect((await cli(["keys"], {}, npm)).err[1]).toBe(
        "Usage: npm run petstore -- keys <create|list|show|usage|update|roll|revoke|unban>  (see 'npm run petstore -- keys --help')",
      );
    });
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
    expect(err.at(-1)).toBe(
      "petstore: cannot listen on 127.0.0.1 port 0: petstore serve needs Bun or Deno (Node.js has no built-in fetch server)",
    );
  });
});

describe("the life of a key on the command line", () => {
  const env = { USER: "tester" };
  const who = `cli:tester@${hostname()}`;
  const json = async (argv: string[], db: string) => {
    const result = await cli([...argv, "--db", db, "--json"], env);
    expect(result.err, argv.join(" ")).toEqual([]);
    expect(result.code).toBe(0);
    // biome-ignore lint/suspicious/noExplicitAny: a test reads the printed JSON's fields freely
    return JSON.parse(result.out) as Record<string, any>;
  };

  describe("one key's life: created with an expiry, shown, updated, rolled, revoked, audited", () => {
    const db = `file:${join(dir, "life.db")}`;
    // biome-ignore lint/suspicious/noExplicitAny: a test reads the printed JSON's fields freely
    let created: Record<string, any>;
    let id: string;
    // biome-ignore lint/suspicious/noExplicitAny: a test reads the printed JSON's fields freely
    let rolled: Record<string, any>;
    // biome-ignore lint/suspicious/noExplicitAny: a test reads the printed JSON's fields freely
    let revoked: Record<string, any>;
    type AuditEntry = {
      id: number;
      action: string;
      keyId: string;
      actor: { who: string };
      at: string;
      details?: Record<string, unknown>;
    };
    let all: AuditEntry[];
    /** The key's own entries, newest first. */
    let entries: AuditEntry[];

    beforeAll(async () => {
      created = await json(
        [
          "keys",
          "create",
          "--plan",
          "pro",
          "--per-minute",
          "7",
          "--label",
          "shop",
          "--expires",
          "2099-01-31T00:00:00+01:00",
        ],
        db,
      );
      id = created.id;
    });

    it("create stores the expiry given with an offset in UTC", () => {
      expect(created.expiresAt).toBe("2099-01-30T23:00:00.000Z");
    });

    it("show prints every field of the new key, unused and not rolling", async () => {
      const shown = await cli(["keys", "show", id, "--db", db], env);
      expect(shown.code).toBe(0);
      expect(shown.out.split("\n")).toEqual([
        `ID           ${id}`,
        "State        active",
        "Plan         pro",
        "Per minute   7 (set for this key)",
        "Per day      10000 (the plan's)",
        "Label        shop",
        "Scopes       all",
        "Allow from   any address",
        `Created      ${created.createdAt.replace(/\.\d{3}Z$/, "Z")}`,
        "Expires      2099-01-30T23:00:00Z",
        "Last used    never (the servers write uses within 10 s)",
        "Rolling      no",
        expect.stringMatching(/^This minute {2}0 of 7 \(until \S+Z\)$/),
        expect.stringMatching(/^Today {8}0 of 10000 \(until \d{4}-\d\d-\d\dT00:00:00Z, UTC days\)$/),
        "Banned       no",
        "Revoked      no",
      ]);
    });

    it("an upgrade keeps the key: 'plan' drops the override, --no-label the label, 'never' the expiry", async () => {
      const upgraded = await json(
        ["keys", "update", id, "--plan", "business", "--per-minute", "plan", "--no-label", "--expires", "never"],
        db,
      );
      expect(upgraded).toMatchObject({
        id,
        plan: "business",
        perMinute: 1_000,
        perDay: 100_000,
        label: null,
        expiresAt: null,
        revokedAt: null,
      });
    });

    it("update prints the key as changed, applied by every server within 5 seconds", async () => {
      const readable = await cli(["keys", "update", id, "--per-day", "5000", "--label", "shop 2", "--db", db], env);
      expect(readable.out.split("\n").slice(0, 6)).toEqual([
        `Updated ${id}. Every server applies the change within 5 seconds.`,
        `  ID           ${id}`,
        "  State        active",
        "  Plan         business",
        "  Per minute   1000 (the plan's)",
        "  Per day      5000 (set for this key)",
      ]);
    });

    it("an enterprise plan without limits of its own is refused, the key unchanged", async () => {
      // An enterprise key sells numbers of its own: never the fallback by accident.
      const enterprise = await cli(["keys", "update", id, "--plan", "enterprise", "--db", db], env);
      expect(enterprise).toEqual(
        failedSaying(
          `petstore: --per-minute is required for an enterprise key (its limits are its own, not a plan's) (${id} is unchanged)`,
        ),
      );
    });

    it("roll hands out a new secret, the old one working for the overlap", async () => {
      rolled = await json(["keys", "roll", id, "--overlap", "60s"], db);
      expect(rolled.key).toMatch(/^psk_\w{38}$/);
      expect(rolled.key).not.toBe(created.key);
      expect(Date.parse(rolled.rolling.until) - Date.parse(rolled.rolling.since)).toBe(60_000);
      expect(rolled).toMatchObject({ id, plan: "business", perDay: 5_000, label: "shop 2" });
    });

    it("a key already rolling refuses another roll, and show says until when the old secret works", async () => {
      const again = await cli(["keys", "roll", id, "--overlap", "0s", "--db", db], env);
      expect(again).toEqual(
        failedSaying(
          `petstore: ${id} is already rolling: rolled at ${rolled.rolling.since.replace(/\.\d{3}Z$/, "Z")}, its old secret works until ${rolled.rolling.until.replace(/\.\d{3}Z$/, "Z")}; roll it again after that (or revoke it, if that secret leaked)`,
        ),
      );
      expect((await cli(["keys", "show", id, "--db", db], env)).out).toContain(
        `Rolling      the old secret works until ${rolled.rolling.until.replace(/\.\d{3}Z$/, "Z")} (rolled at `,
      );
    });

    it("a revoked key takes no change", async () => {
      revoked = await json(["keys", "revoke", id], db);
      expect(revoked.revokedAt).toMatch(ISO);
      for (const change of [
        ["update", id, "--label", "x"],
        ["roll", id, "--overlap", "0s"],
      ]) {
        expect(await cli(["keys", ...change, "--db", db], env)).toEqual(
          failedSaying(
            `petstore: ${id} was revoked at ${revoked.revokedAt.replace(/\.\d{3}Z$/, "Z")}: a revoked key takes no change (create a new key instead)`,
          ),
        );
      }
    });

    it("an unknown id is refused with a pointer to keys list", async () => {
      for (const argv of [
        ["keys", "show", "key_nobody"],
        ["keys", "update", "key_nobody", "--label", "x"],
        ["keys", "roll", "key_nobody", "--overlap", "0s"],
        ["keys", "unban", "key_nobody"],
      ]) {
        expect(await cli([...argv, "--db", db], env)).toEqual(
          failedSaying("petstore: no API key has the id 'key_nobody' (see 'petstore keys list')"),
        );
      }
    });

    it("audit lists each change as the CLI user, newest first, the account's too, and no secret", async () => {
      const trail = (await cli(["audit", "--db", db, "--json"], env)).out;
      all = JSON.parse(trail) as AuditEntry[];
      // The account made for the key is in the trail too, under its own id: made, and changed by the plan's updates.
      expect(all.filter((entry) => entry.keyId !== id).map((entry) => `${entry.action} ${entry.keyId}`)).toEqual([
        `update ${ownAccountId(id)}`,
        `update ${ownAccountId(id)}`,
        `create ${ownAccountId(id)}`,
      ]);
      entries = all.filter((entry) => entry.keyId === id);
      expect(entries.map((entry) => entry.action)).toEqual(["revoke", "roll", "update", "update", "create"]);
      expect(entries.every((entry) => entry.keyId === id && entry.actor.who === who && ISO.test(entry.at))).toBe(true);
      expect(entries[1]!.details).toEqual({ overlapMs: 60_000 });
      expect(entries[3]!.details).toEqual({ plan: "business", perMinute: null, label: null, expiresAt: null });
      expect(trail).not.toContain("psk_");
    });

    it("audit pages with --limit, then --before the last one shown", async () => {
      const page = await cli(["audit", "--limit", "2", "--db", db], env);
      expect(page.out.split("\n")).toEqual([
        expect.stringMatching(/^ENTRY\s+AT\s+ACTION\s+KEY\s+WHO\s+FROM\s+DETAILS$/),
        expect.stringMatching(
          new RegExp(`^${entries[0]!.id}\\s+\\S+Z\\s+revoke\\s+${id}\\s+${who.replace(/\./g, "\\.")}\\s+-$`),
        ),
        expect.stringMatching(
          new RegExp(`^${entries[1]!.id}\\s+\\S+Z\\s+roll\\s+${id}\\s+\\S+\\s+-\\s+overlapMs=60000$`),
        ),
        `(more before: petstore audit --before ${entries[1]!.id})`,
      ]);
      const next = JSON.parse(
        (await cli(["audit", "--before", String(entries[1]!.id), "--db", db, "--json"], env)).out,
      ) as unknown[];
      expect(next).toEqual(all.slice(all.indexOf(entries[1]!) + 1));
    });

    it("audit --key keeps one key's entries", async () => {
      await json(["keys", "create", "--plan", "free"], db);
      expect(JSON.parse((await cli(["audit", "--key", id, "--db", db, "--json"], env)).out)).toEqual(entries);
      expect((await cli(["audit", "--key", "key_nobody", "--db", db], env)).out).toBe(
        "No changes recorded for key_nobody.",
      );
    });
  });

  it("creates a key with fewer scopes and ranges, shows them, changes them and clears them, audited", async () => {
    const db = `file:${join(dir, "scopes.db")}`;
    const created = await json(
      [
        "keys",
        "create",
        "--plan",
        "free",
        "--scopes",
        "orders:read, pets:read",
        "--allow-from",
        "10.0.0.0/8,2001:db8::/32",
      ],
      db,
    );
    expect(created).toMatchObject({ scopes: ["pets:read", "orders:read"], allowFrom: ["10.0.0.0/8", "2001:db8::/32"] });
    const shown = (await cli(["keys", "show", created.id, "--db", db], env)).out.split("\n");
    expect(shown).toContain("Scopes       pets:read, orders:read");
    expect(shown).toContain("Allow from   10.0.0.0/8, 2001:db8::/32");
    const listed = (await cli(["keys", "list", "--db", db], env)).out.split("\n")[1];
    expect(listed).toMatch(/\spets:read,orders:read\s+10\.0\.0\.0\/8,2001:db8::\/32$/);
    const changed = await json(["keys", "update", created.id, "--scopes", "pets:write", "--allow-from", "any"], db);
    expect(changed).toMatchObject({ scopes: ["pets:write"], allowFrom: null });
    const opened = await json(["keys", "update", created.id, "--scopes", "pets:read,pets:write,orders:read"], db);
    expect(opened.scopes).toEqual(["pets:read", "pets:write", "orders:read"]);
    const trail = await json(["audit", "--key", created.id], db);
    expect(trail.map((entry: { details: unknown }) => entry.details)).toEqual([
      { scopes: null },
      { scopes: ["pets:write"], allowFrom: null },
      { plan: "free", scopes: ["pets:read", "orders:read"], allowFrom: ["10.0.0.0/8", "2001:db8::/32"] },
    ]);
  });

  it("shows every state a key is in at once, and no overlap for a revoked key", async () => {
    const db = `file:${join(dir, "states.db")}`;
    const { id } = await json(["keys", "create", "--plan", "free"], db);
    await json(["keys", "roll", id, "--overlap", "1h"], db);
    expect((await json(["keys", "show", id], db)).states).toEqual(["active", "rolling"]);
    expect((await cli(["keys", "show", id, "--db", db], env)).out).toMatch(/^State {8}active, rolling$/m);
    await cli(["keys", "revoke", id, "--db", db], env);
    const revoked = await json(["keys", "show", id], db);
    expect([revoked.states, revoked.rolling]).toEqual([["revoked"], null]);
    const row = (await cli(["keys", "list", "--db", db], env)).out.split("\n")[1]!.split(/\s{2,}/);
    // ID, STATE, PLAN, PER-MINUTE, PER-DAY, TODAY, CREATED, EXPIRES, LAST-USED, ROLLING-UNTIL, ...
    expect([row[0], row[1], row[9]]).toEqual([id, "revoked", "-"]);
  });

  it("shows this minute's and today's usage and a ban from the limiter, and lifts the ban, audited", async () => {
    const db = `file:${join(dir, "usage.db")}`;
    const { id } = await json(["keys", "create", "--plan", "free", "--per-minute", "2"], db);
    // Requests as a server counts them: two admitted, then refusals past the ban's threshold.
    const storage = await openStorage({ url: db });
    const windows: WindowPair = [
      { name: "minute", limit: 2, seconds: 60 },
      { name: "day", limit: 1_000, seconds: 86_400 },
    ];
    const decisions: Decision[] = [];
    try {
      while (decisions.at(-1)?.bannedUntil === undefined && decisions.length < 10)
        decisions.push(
          await storage.adapters.limiter.hit({
            bucket: keyBucket(id, ownAccountId(id)),
            windows,
            ban: { threshold: 1, seconds: 600 },
          }),
        );
    } finally {
      storage.close();
    }
    const banned = decisions.at(-1)!;
    expect(banned.bannedUntil).toBeDefined();
    const view = await json(["keys", "show", id], db);
    const sameMinute = view.usage.minute.resetAt === new Date(banned.windows[0]!.resetAt).toISOString();
    expect(view.usage).toEqual({
      minute: { used: sameMinute ? 2 : 0, limit: 2, resetAt: expect.stringMatching(ISO) },
      day: { used: 2, limit: 1_000, resetAt: new Date(banned.windows[1]!.resetAt).toISOString() },
      bannedUntil: new Date(banned.bannedUntil!).toISOString(),
    });
    // Peeking counted nothing, and keys list holds the same object.
    expect((await json(["keys", "list"], db)) as unknown).toEqual([await json(["keys", "show", id], db)]);
    const until = new Date(banned.bannedUntil!).toISOString().replace(/\.\d{3}Z$/, "Z");
    expect((await cli(["keys", "show", id, "--db", db], env)).out).toContain(
      `Banned       until ${until} (lift it: petstore keys unban ${id})`,
    );
    expect((await cli(["keys", "list", "--db", db], env)).out.split("\n")[1]).toMatch(
      new RegExp(
        `^${id}\\s+active,banned\\s+free\\s+2\\s+1000\\s+2/1000\\s+\\S+Z\\s+-\\s+-\\s+-\\s+${until}\\s+-\\s+all\\s+any$`,
      ),
    );

    expect(await cli(["keys", "unban", id, "--db", db], env)).toEqual({
      code: 0,
      out: `Lifted the ban of ${id}: its next request is decided by its limits alone.`,
      err: [],
    });
    const lifted = await json(["keys", "show", id], db);
    expect(lifted.usage).toMatchObject({ day: { used: 2 }, bannedUntil: null });
    expect(await json(["keys", "unban", id], db)).toEqual({ ...lifted, unbanned: false });
    expect((await cli(["keys", "unban", id, "--db", db], env)).out).toBe(`${id} was not banned; nothing changed.`);
    const [entry] = JSON.parse((await cli(["audit", "--key", id, "--limit", "1", "--db", db, "--json"], env)).out) as {
      action: string;
      actor: { who: string };
    }[];
    expect(entry).toMatchObject({ action: "unban", actor: { who } });
  });

  it("reads no usage from the database when its servers count in Redis, and names --limiter; refuses a Redis for a database whose servers count in it", async () => {
    const db = `file:${join(dir, "elsewhere.db")}`;
    const { id } = await json(["keys", "create", "--plan", "free"], db);
    const storage = await openStorage({ url: db });
    try {
      await storage.setting("limiter", "redis", true);
    } finally {
      storage.close();
    }
    const reason =
      "the servers of this database keep the rate limits in Redis: give --limiter redis://HOST (or PETSTORE_LIMITER) to read usage and bans there";
    const shown = await cli(["keys", "show", id, "--db", db, "--json"], env);
    expect([shown.code, JSON.parse(shown.out).usage, shown.err]).toEqual([
      0,
      null,
      [`petstore: usage unknown: ${reason}`],
    ]);
    const text = await cli(["keys", "show", id, "--db", db], env);
    expect(text.out).toContain(`This minute  unknown (${reason})`);
    expect((await cli(["keys", "list", "--db", db], env)).out.split("\n")[1]).toMatch(
      new RegExp(`^${id}\\s+active,banned\\?\\s+free\\s+60\\s+1000\\s+\\?\\s+`),
    );
    expect(await cli(["keys", "unban", id, "--db", db], env)).toEqual(
      failedSaying(`petstore: cannot lift a ban here: ${reason}`),
    );

    const other = `file:${join(dir, "counted-here.db")}`;
    await json(["keys", "create", "--plan", "free"], other);
    const here = await openStorage({ url: other });
    try {
      await here.setting("limiter", "database", true);
    } finally {
      here.close();
    }
    for (const [argv, variables] of [
      [["keys", "list", "--limiter", "redis://127.0.0.1:1"], env],
      [["keys", "list"], { ...env, PETSTORE_LIMITER: "redis://127.0.0.1:1" }],
    ] as const) {
      expect(await cli([...argv, "--db", other], variables)).toEqual(
        failedSaying(
          "petstore: the servers of this database keep the rate limits in the database, not in Redis: run this without --limiter (and PETSTORE_LIMITER)",
        ),
      );
    }
  });

  it("creates, lists and revokes admin tokens, never printing one twice, audited", async () => {
    const db = `file:${join(dir, "tokens.db")}`;
    await json(["keys", "create", "--plan", "free"], db);
    const made = await json(["admin-tokens", "create", "--label", "ops laptop"], db);
    expect(made).toEqual({
      id: expect.stringMatching(/^tok_\w{12}$/),
      token: expect.stringMatching(/^psa_\w{44}$/),
      label: "ops laptop",
      createdAt: expect.stringMatching(ISO),
      database: join(dir, "tokens.db"),
      databaseCreated: false,
    });
    expect(made.token.slice(4, 16)).toBe(made.id.slice(4));
    const readable = await cli(["admin-tokens", "create", "--db", db], env);
    expect(readable.out).toMatch(
      /^Created admin token tok_\w{12}\.\nStored in the database \S+tokens\.db\.\n\n {4}psa_\w{44}\n\nThis is the only time the token is shown/,
    );
    const listed = await json(["admin-tokens", "list"], db);
    expect(listed).toEqual([
      { id: made.id, label: "ops laptop", createdAt: made.createdAt, revokedAt: null },
      { id: expect.stringMatching(/^tok_/), label: null, createdAt: expect.stringMatching(ISO), revokedAt: null },
    ]);
    const table = await cli(["admin-tokens", "list", "--db", db], env);
    expect(table.out.split("\n")[0]).toMatch(/^ID\s+CREATED\s+REVOKED\s+LABEL$/);
    for (const output of [JSON.stringify(listed), table.out]) expect(output).not.toContain("psa_");

    expect(await cli(["admin-tokens", "revoke", made.id, "--db", db], env)).toEqual({
      code: 0,
      out: `Revoked ${made.id}: the admin API answers it 401 from now on.`,
      err: [],
    });
    const revokedAt = (await json(["admin-tokens", "list"], db))[0].revokedAt as string;
    expect(revokedAt).toMatch(ISO);
    expect((await cli(["admin-tokens", "revoke", made.id, "--db", db], env)).out).toBe(
      `${made.id} was already revoked at ${revokedAt}; nothing changed.`,
    );
    expect(await cli(["admin-tokens", "revoke", "tok_nobody", "--db", db], env)).toEqual(
      failedSaying("petstore: no admin token has the id 'tok_nobody' (see 'petstore admin-tokens list')"),
    );
    const trail = JSON.parse((await cli(["audit", "--key", made.id, "--db", db, "--json"], env)).out) as {
      action: string;
      actor: { who: string };
      details: unknown;
    }[];
    expect(trail).toEqual([
      expect.objectContaining({ action: "revoke", actor: { who }, details: { adminToken: true } }),
      expect.objectContaining({ action: "create", actor: { who }, details: { adminToken: true, label: "ops laptop" } }),
    ]);
  });

  it("makes the database for a first admin token on a fresh machine, saying where", async () => {
    const fresh = join(dir, "fresh-vm", "petstore.db");
    mkdirSync(join(dir, "fresh-vm"));
    const made = await cli(["admin-tokens", "create", "--label", "first", "--db", `file:${fresh}`], env);
    expect(made.code).toBe(0);
    expect(made.out.split("\n")[1]).toBe(
      `Stored in a new database, ${fresh}: there was none at that path. The admin listener of a server on another database refuses this token: give its database with --db (or PETSTORE_DB).`,
    );
    expect((await json(["admin-tokens", "list"], `file:${fresh}`)) as unknown[]).toHaveLength(1);
  });

  it("records the user of the process as who made a change when USER and LOGNAME are unset", async () => {
    const db = `file:${join(dir, "no-user.db")}`;
    expect((await cli(["keys", "create", "--plan", "free", "--db", db], {})).code).toBe(0);
    const [entry] = JSON.parse((await cli(["audit", "--db", db, "--json"], {})).out) as { actor: { who: string } }[];
    expect(entry!.actor.who).toBe(`cli:${userInfo().username}@${hostname()}`);
  });

  it("refuses every command but keys create and admin-tokens create on a database file that does not exist, creating none", async () => {
    const typo = join(dir, "no-such.db");
    for (const argv of COMMANDS_ON_AN_EXISTING_DATABASE) {
      expect(await cli([...argv, "--db", `file:${typo}`], env), argv.join(" ")).toEqual(
        failedSaying(
          `petstore: no database at ${typo} (is the path right? 'petstore serve', 'petstore keys create' or 'petstore admin-tokens create' makes one)`,
        ),
      );
    }
    expect(existsSync(typo)).toBe(false);
  });

  it("works on a :memory: database, empty for each command", async () => {
    expect(await cli(["keys", "show", "key_x", "--db", ":memory:"], env)).toEqual(
      failedSaying("petstore: no API key has the id 'key_x' (see 'petstore keys list')"),
    );
    expect(await cli(["keys", "list", "--db", ":memory:", "--json"], env)).toEqual({ code: 0, out: "[]", err: [] });
    expect(await cli(["audit", "--db", ":memory:"], env)).toEqual({
      code: 0,
      out: "No changes recorded yet.",
      err: [],
    });
    expect(await cli(["admin-tokens", "list", "--db", ":memory:"], env)).toEqual({
      code: 0,
      out: "No admin tokens yet. Create one: petstore admin-tokens create --label NAME",
      err: [],
    });
  });
});
