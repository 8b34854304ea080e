import { keyBucket, ownAccountId } from "@petstore/core";
import type { WindowPair } from "@petstore/core";
import { hostname } from "node:os";
import type { Decision } from "@petstore/core";
import { beforeAll, describe, expect, it } from "vitest";
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

describe("keys on a Postgres database whose role needs a password", () => {
  let url: string;
  let withPassword: string;
  let id: string;
  const env = { PGPASSWORD: PASSWORD };
  /** Every output of these commands: none ever shows the password. */
  const unprinted = <Output extends { out: string; err: string[] }>(output: Output) => {
    expect(output.out + output.err.join("\n")).not.toContain(PASSWORD);
    return output;
  };

  beforeAll(async () => {
    url = await appDatabase();
    withPassword = url.replace("petstore_app@", `petstore_app:${PASSWORD}@`);
  });

  it("creates a key with the password from PGPASSWORD, naming the server's database without credentials", async () => {
    const created = unprinted(
      await cli(["keys", "create", "--plan", "pro", "--label", "ci", "--db", url, "--json"], env),
    );
    expect(created.err).toEqual([]);
    expect(created.code).toBe(0);
    const made = JSON.parse(created.out) as {
      id: string;
      key: string;
      plan: string;
      database: string;
      databaseCreated: boolean;
    };
    id = made.id;
    const { key, plan, database: storedIn, databaseCreated } = made;
    expect(plan).toBe("pro");
    expect(key).toMatch(/^psk_/);
    // The database named as the server's URL, without credentials; a server's database is never made by the command.
    expect([storedIn, databaseCreated]).toEqual([url.replace("petstore_app@", ""), false]);
  });

  it("names the database without the password a URL carried", async () => {
    const readable = unprinted(await cli(["keys", "create", "--plan", "free", "--db", withPassword]));
    expect(readable.out.split("\n")[1]).toBe(`Stored in the database ${url.replace("petstore_app@", "")}.`);
  });

  it("lists and revokes a key with the password from PGPASSWORD", async () => {
    const listed = unprinted(await cli(["keys", "list", "--db", url, "--json"], env));
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(id);
    expect(unprinted(await cli(["keys", "revoke", id, "--db", url], env))).toMatchObject({ code: 0 });
    const again = unprinted(await cli(["keys", "list", "--db", url, "--json"], env));
    expect(again.out).toMatch(/revoked/i);
  });

  it("opens the database through PETSTORE_DB with the password in the URL", async () => {
    expect((await cli(["keys", "list", "--json"], { PETSTORE_DB: withPassword })).code).toBe(0);
  });

  it("refuses a wrong password in the URL in one line naming whose it is, without printing it", async () => {
    const wrong = await cli(["keys", "list"], {
      PETSTORE_DB: url.replace("petstore_app@", "petstore_app:wrong-password@"),
    });
    expect(wrong.code).toBe(1);
    expect(wrong.err).toHaveLength(1);
    expect(wrong.err[0]).toMatch(
      /^petstore: cannot open postgres:\/\/127\.0\.0\.1:\d+\/\w+: password authentication failed for user "petstore_app" \(the password in the URL was refused for the URL's user petstore_app: check it, or drop it from the URL and set PGPASSWORD\)$/,
    );
    expect(wrong.err[0]).not.toContain("wrong-password");
  });

  it("refuses a wrong PGPASSWORD naming PGPASSWORD and whose password it is, without printing it", async () => {
    const fromEnv = await cli(["keys", "list", "--db", url], { PGPASSWORD: "wrong-password" });
    expect(fromEnv.err).toEqual([
      expect.stringMatching(
        / \(PGPASSWORD was refused for the URL's user petstore_app: check the password, and the user in the URL\)$/,
      ),
    ]);
    expect(fromEnv.err[0]).not.toContain("wrong-password");
  });

  it("refuses a URL without a password, saying where one goes", async () => {
    const none = await cli(["keys", "list", "--db", url]);
    expect(none.code).toBe(1);
    expect(none.err).toEqual([
      expect.stringMatching(
        /^petstore: cannot open postgres:\/\/127\.0\.0\.1:\d+\/\w+: .* \(no password was given for the URL's user petstore_app: set PGPASSWORD, or put it in the URL as postgres:\/\/USER:PASSWORD@HOST\/DATABASE\)$/,
      ),
    ]);
  });
});

describe("petstore on a Postgres database", () => {
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

  // One key through its life, each step on the key the steps before it left.
  describe("one key, step by step", () => {
    let url: string;
    let id: string;
    let rolling: { since: string; until: string };
    let revokedAt: string;
    const json = async (argv: string[]) => {
      const result = await cli([...argv, "--db", url, "--json"], env);
      expect(result.err, argv.join(" ")).toEqual([]);
      expect(result.code).toBe(0);
      // biome-ignore lint/suspicious/noExplicitAny: a test reads the printed JSON's fields freely
      return JSON.parse(result.out) as Record<string, any>;
    };

    beforeAll(async () => {
      url = await appDatabase();
    });

    it("creates a key with an expiry, its own per-minute and its plan's per-day", async () => {
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
      id = created.id;
      expect(created).toMatchObject({
        plan: "free",
        perMinute: 2,
        perDay: 1_000,
        expiresAt: "2099-01-31T00:00:00.000Z",
        usage: { day: { used: 0 } },
      });
    });

    it("updates the plan, drops the expiry and the label, keeping the key's own per-minute", async () => {
      expect(await json(["keys", "update", id, "--plan", "pro", "--expires", "never", "--no-label"])).toMatchObject({
        plan: "pro",
        perMinute: 2,
        perDay: 10_000,
        label: null,
        expiresAt: null,
      });
    });

    it("shows and lists the ban a server set in the database's limiter, with the day's count", async () => {
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
    });

    it("lifts the ban, keeping the day's count", async () => {
      expect(await json(["keys", "unban", id])).toMatchObject({
        id,
        unbanned: true,
        usage: { day: { used: 2 }, bannedUntil: null },
      });
    });

    it("rolls the key to a new secret, the old one working for the overlap asked", async () => {
      const rolled = await json(["keys", "roll", id, "--overlap", "7d"]);
      expect(rolled.key).toMatch(/^psk_/);
      rolling = rolled.rolling;
      expect(Date.parse(rolling.until) - Date.parse(rolling.since)).toBe(7 * 86_400_000);
    });

    it("refuses a second roll while the first runs, naming until when the old secret works", async () => {
      const again = await cli(["keys", "roll", id, "--overlap", "0s", "--db", url], env);
      expect([again.code, again.err]).toEqual([
        1,
        [
          expect.stringMatching(
            new RegExp(
              `^petstore: ${id} is already rolling: rolled at \\S+Z, its old secret works until ${rolling.until.replace(/\.\d{3}Z$/, "Z")}; `,
            ),
          ),
        ],
      ]);
    });

    it("refuses a change to a revoked key, naming when it was revoked", async () => {
      ({ revokedAt } = await json(["keys", "revoke", id]));
      const refused = await cli(["keys", "update", id, "--plan", "business", "--db", url], env);
      expect(refused).toEqual({
        code: 1,
        out: "",
        err: [
          `petstore: ${id} was revoked at ${revokedAt.replace(/\.\d{3}Z$/, "Z")}: a revoked key takes no change (create a new key instead)`,
        ],
      });
    });

    it("audits each change, newest first, under the CLI's user and host", async () => {
      const trail = (await json(["audit", "--key", id])) as unknown as { action: string; actor: { who: string } }[];
      expect(trail.map((entry) => entry.action)).toEqual(["revoke", "roll", "unban", "update", "create"]);
      expect(trail.every((entry) => entry.actor.who === who)).toBe(true);
    });
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
