import { keyBucket, ownAccountId } from "@petstore/core";
import type { WindowPair } from "@petstore/core";
import { hostname } from "node:os";
import type { Decision } from "@petstore/core";
import { describe, expect, it } from "vitest";
import { usePostgresDatabase } from "../../../../test/_support/postgres-database.js";
import { freePort } from "../../../../test/_support/free-port.js";
import { COMMANDS_ON_AN_EXISTING_DATABASE, cliInProcess } from "../../../../test/_support/cli-in-process.js";
import type { Env } from "../commands/_command.js";
import { openStorage } from "./open-storage.js";

const cli = (argv: string[], env: Env = {}) => cliInProcess(argv, env);

// The run's real PostgreSQL server; a database of this suite's own, owned by a role with a password.
const database = usePostgresDatabase();
const PASSWORD = "s3cret-Pa55";

/** The suite's database as a role that must give a password (SCRAM): its URL without one. */
async function appDatabase(): Promise<string> {
  const { source, close } = await database.fresh();
  try {
    await source.sql.unsafe(
      `DO $$ BEGIN CREATE ROLE petstore_app LOGIN PASSWORD '${PASSWORD}'; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
    );
    const name = new URL(database.url).pathname.slice(1);
    await source.sql.unsafe(`GRANT ALL ON DATABASE ${name} TO petstore_app`);
    // A schema of its own for each test: no keys from the tests before it.
    await source.sql.unsafe("DROP SCHEMA IF EXISTS petstore_app CASCADE");
    await source.sql.unsafe(`CREATE SCHEMA petstore_app AUTHORIZATION petstore_app`);
  } finally {
    await close();
  }
  // The role's own schema comes first in its search_path ("$user").
  return database.url.replace("postgres@", "petstore_app@");
}

describe("petstore on a Postgres database", () => {
  it("creates, lists and revokes keys with the password from PGPASSWORD, which it never prints", async () => {
    const url = await appDatabase();
    const env = { PGPASSWORD: PASSWORD };
    const created = await cli(["keys", "create", "--plan", "pro", "--label", "ci", "--db", url, "--json"], env);
    expect(created.err).toEqual([]);
    expect(created.code).toBe(0);
    const {
      id,
      key,
      plan,
      database: storedIn,
      databaseCreated,
    } = JSON.parse(created.out) as {
      id: string;
      key: string;
      plan: string;
      database: string;
      databaseCreated: boolean;
    };
    expect(plan).toBe("pro");
    // The database named as the server's URL, without credentials; a server's database is never made by the command.
    expect([storedIn, databaseCreated]).toEqual([url.replace("petstore_app@", ""), false]);
    const readable = await cli([
      "keys",
      "create",
      "--plan",
      "free",
      "--db",
      url.replace("petstore_app@", `petstore_app:${PASSWORD}@`),
    ]);
    expect(readable.out.split("\n")[1]).toBe(`Stored in the database ${url.replace("petstore_app@", "")}.`);
    expect(key).toMatch(/^psk_/);
    const listed = await cli(["keys", "list", "--db", url, "--json"], env);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(id);
    expect(await cli(["keys", "revoke", id, "--db", url], env)).toMatchObject({ code: 0 });
    const again = await cli(["keys", "list", "--db", url, "--json"], env);
    expect(again.out).toMatch(/revoked/i);
    for (const output of [created, readable, listed, again])
      expect(output.out + output.err.join("\n")).not.toContain(PASSWORD);

    // The same through PETSTORE_DB, and a password in the URL: it works, and errors hide it.
    const withPassword = url.replace("petstore_app@", `petstore_app:${PASSWORD}@`);
    expect((await cli(["keys", "list", "--json"], { PETSTORE_DB: withPassword })).code).toBe(0);
    const wrong = await cli(["keys", "list"], {
      PETSTORE_DB: url.replace("petstore_app@", "petstore_app:wrong-password@"),
    });
    expect(wrong.code).toBe(1);
    expect(wrong.err).toHaveLength(1);
    expect(wrong.err[0]).toMatch(
      /^petstore: cannot open postgres:\/\/127\.0\.0\.1:\d+\/\w+: password authentication failed for user "petstore_app" \(the password in the URL was refused for the URL's user petstore_app: check it, or drop it from the URL and set PGPASSWORD\)$/,
    );
    expect(wrong.err[0]).not.toContain("wrong-password");
    // The password from PGPASSWORD, or none at all: each names where a password goes and whose it is.
    const fromEnv = await cli(["keys", "list", "--db", url], { PGPASSWORD: "wrong-password" });
    expect(fromEnv.err).toEqual([
      expect.stringMatching(
        / \(PGPASSWORD was refused for the URL's user petstore_app: check the password, and the user in the URL\)$/,
      ),
    ]);
    expect(fromEnv.err[0]).not.toContain("wrong-password");
    const none = await cli(["keys", "list", "--db", url]);
    expect(none.code).toBe(1);
    expect(none.err).toEqual([
      expect.stringMatching(
        /^petstore: cannot open postgres:\/\/127\.0\.0\.1:\d+\/\w+: .* \(no password was given for the URL's user petstore_app: set PGPASSWORD, or put it in the URL as postgres:\/\/USER:PASSWORD@HOST\/DATABASE\)$/,
      ),
    ]);
  });

  it("prints the database URL with its user and parameters, never its password, in the hint of a server without keys", async () => {
    const url = `${(await appDatabase()).replace("petstore_app@", `petstore_app:${PASSWORD}@`)}?sslmode=disable`;
    // Under Node the command stops before listening (no fetch server), after the key check.
    const { err } = await cli(["serve", "--db", url, "--port", "0", "--host", "127.0.0.1"]);
    const hint = JSON.parse(err[0]!) as { message: string };
    expect(hint.message).toContain(`petstore keys create --plan free --db ${url.replace(`:${PASSWORD}@`, "@")}`);
    expect(err.join("\n")).not.toContain(PASSWORD);
  });

  it("refuses to start with one line and exit 1 when the server is down", async () => {
    const port = await freePort();
    const { code, out, err } = await cli([
      "serve",
      "--db",
      `postgres://petstore@127.0.0.1:${port}/petstore`,
      "--port",
      "0",
      "--host",
      "127.0.0.1",
    ]);
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toEqual([
      `petstore: cannot open postgres://127.0.0.1:${port}/petstore: the Postgres server is unreachable (ECONNREFUSED)`,
    ]);
  });

  it("says that TLS was not set up when the URL asks for it (sslmode=require) and the server has none (was: unreachable (ECONNRESET))", async () => {
    // The suite's database exists once a schema was made in it.
    await (await database.fresh()).close();
    const { code, err } = await cli([
      "serve",
      "--db",
      `${database.url}?sslmode=require`,
      "--port",
      "0",
      "--host",
      "127.0.0.1",
    ]);
    expect(code).toBe(1);
    expect(err).toEqual([
      // The server asked at start (PostgreSQL's SSLRequest) whether it speaks TLS: it answered no.
      `petstore: cannot open ${database.url.replace("postgres@", "")}: TLS: the server at ${new URL(database.url).host} does not accept TLS connections (sslmode=require)`,
    ]);
  });

  it("says in one line to use pg_dump when asked to back up a Postgres database", async () => {
    const { code, err } = await cli([
      "backup",
      "--db",
      "postgres://petstore:hidden@db.internal/petstore",
      "--out",
      "x.db",
    ]);
    expect(code).toBe(1);
    expect(err).toHaveLength(1);
    expect(err[0]).toContain("pg_dump");
    expect(err[0]).not.toContain("hidden");
  });
});

describe("the life of a key on a Postgres database", () => {
  const env = { PGPASSWORD: PASSWORD, USER: "tester" };
  const who = `cli:tester@${hostname()}`;

  it("creates with an expiry, shows, updates, rolls, reads and lifts a ban, revokes, and audits each change", async () => {
    const url = await appDatabase();
    const json = async (argv: string[]) => {
      const result = await cli([...argv, "--db", url, "--json"], env);
      expect(result.err, argv.join(" ")).toEqual([]);
      expect(result.code).toBe(0);
      // biome-ignore lint/suspicious/noExplicitAny: a test reads the printed JSON's fields freely
      return JSON.parse(result.out) as Record<string, any>;
    };
    const created = await json([
      "keys",
      "create",
      "--plan",
      "free",
      "--per-minute",
      "2",
      "--label",
      "shop",
      "--expires",
      "2099-01-31T00:00:00Z",
    ]);
    const { id } = created;
    expect(created).toMatchObject({
      plan: "free",
      perMinute: 2,
      perDay: 1_000,
      expiresAt: "2099-01-31T00:00:00.000Z",
      usage: { day: { used: 0 } },
    });
    expect(await json(["keys", "update", id, "--plan", "pro", "--expires", "never", "--no-label"])).toMatchObject({
      plan: "pro",
      perMinute: 2,
      perDay: 10_000,
      label: null,
      expiresAt: null,
    });

    // A ban, as a server on this database would set it: in the database's limiter.
    const storage = await openStorage({ url, password: PASSWORD });
    let banned: Decision | undefined;
    try {
      const windows: WindowPair = [
        { name: "minute", limit: 2, seconds: 60 },
        { name: "day", limit: 10_000, seconds: 86_400 },
      ];
      for (let i = 0; i < 10 && banned?.bannedUntil === undefined; i++)
        banned = await storage.adapters.limiter.hit({
          bucket: keyBucket(id, ownAccountId(id)),
          windows,
          ban: { threshold: 1, seconds: 600 },
        });
    } finally {
      storage.close();
    }
    const shown = await json(["keys", "show", id]);
    expect(shown.usage).toMatchObject({
      day: { used: 2, limit: 10_000 },
      bannedUntil: new Date(banned!.bannedUntil!).toISOString(),
    });
    expect(await json(["keys", "list"])).toEqual([shown]);
    expect(await json(["keys", "unban", id])).toMatchObject({
      id,
      unbanned: true,
      usage: { day: { used: 2 }, bannedUntil: null },
    });

    const rolled = await json(["keys", "roll", id, "--overlap", "7d"]);
    expect(rolled.key).toMatch(/^psk_/);
    expect(Date.parse(rolled.rolling.until) - Date.parse(rolled.rolling.since)).toBe(7 * 86_400_000);
    const again = await cli(["keys", "roll", id, "--overlap", "0s", "--db", url], env);
    expect([again.code, again.err]).toEqual([
      1,
      [
        expect.stringMatching(
          new RegExp(
            `^petstore: ${id} is already rolling: rolled at \\S+Z, its old secret works until ${rolled.rolling.until.replace(/\.\d{3}Z$/, "Z")}; `,
          ),
        ),
      ],
    ]);
    const revoked = await json(["keys", "revoke", id]);
    const refused = await cli(["keys", "update", id, "--plan", "business", "--db", url], env);
    expect(refused).toEqual({
      code: 1,
      out: "",
      err: [
        `petstore: ${id} was revoked at ${revoked.revokedAt.replace(/\.\d{3}Z$/, "Z")}: a revoked key takes no change (create a new key instead)`,
      ],
    });

    const trail = (await json(["audit", "--key", id])) as unknown as { action: string; actor: { who: string } }[];
    expect(trail.map((entry) => entry.action)).toEqual(["revoke", "roll", "unban", "update", "create"]);
    expect(trail.every((entry) => entry.actor.who === who)).toBe(true);
  });

  it("creates, lists and revokes admin tokens", async () => {
    const url = await appDatabase();
    const made = await cli(["admin-tokens", "create", "--label", "ops", "--db", url, "--json"], env);
    expect(made.code).toBe(0);
    const { id, token } = JSON.parse(made.out) as { id: string; token: string };
    expect(token).toMatch(/^psa_/);
    const listed = await cli(["admin-tokens", "list", "--db", url, "--json"], env);
    expect(JSON.parse(listed.out)).toEqual([{ id, label: "ops", createdAt: expect.any(String), revokedAt: null }]);
    expect(listed.out).not.toContain(token);
    expect(await cli(["admin-tokens", "revoke", id, "--db", url], env)).toEqual({
      code: 0,
      out: `Revoked ${id}: the admin API answers it 401 from now on.`,
      err: [],
    });
    const trail = JSON.parse((await cli(["audit", "--db", url, "--json"], env)).out) as {
      action: string;
      keyId: string;
    }[];
    expect(trail.map((entry) => [entry.action, entry.keyId])).toEqual([
      ["revoke", id],
      ["create", id],
    ]);
  });

  it("says in one line, for every command, that a database does not exist, naming it without its password", async () => {
    const url = (await appDatabase()).replace(/\/\w+$/, "/no_such_database");
    // admin-tokens create too: it makes a database file, never a PostgreSQL database.
    for (const argv of [...COMMANDS_ON_AN_EXISTING_DATABASE, ["admin-tokens", "create"]]) {
      const { code, out, err } = await cli([
        ...argv,
        "--db",
        url.replace("petstore_app@", `petstore_app:${PASSWORD}@`),
      ]);
      expect({ code, out, err }, argv.join(" ")).toEqual({
        code: 1,
        out: "",
        err: [`petstore: cannot open ${url.replace("petstore_app@", "")}: database "no_such_database" does not exist`],
      });
    }
  });
});
