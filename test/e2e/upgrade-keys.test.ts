import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usePostgresDatabases } from "../_support/postgres-database.js";
import { POSTGRES_BIN } from "../_support/postgres-server.js";
import { ensureBinary, ROOT } from "./_binary.js";
import { client } from "./_http.js";
import { binaryServe, cleanUp, cli, startServer, stopProcess, tempDatabaseUrl, waitFor } from "./_processes.js";

/**
 * Issue 29: "the existing keys keep working after the upgrade". The databases are the ones the
 * release before issue 29 wrote (test/fixtures/README.md says how they were made); today's
 * binary migrates them at start and must serve, show, update and roll the keys it finds there.
 */

const FIXTURES = join(ROOT, "test/fixtures");
type OldKey = { id: string; key: string };
const OLD_KEYS = JSON.parse(readFileSync(join(FIXTURES, "pre-issue-29.keys.json"), "utf8")) as Record<
  "libsql" | "postgres",
  Record<"free" | "enterprise" | "revoked", OldKey>
>;

/** What issue 29 and the releases after it added, by engine: the versions a pre-issue-29 database lacks. */
const NEW_MIGRATIONS = [
  "the life of a key: expiry, rolls, last use, audit trail",
  "deployment settings",
  "admin tokens",
  "usage history",
];
const SCOPES_MIGRATION = "scopes and allowed addresses of a key";
const ACCOUNTS_MIGRATIONS = ["accounts", "allowed addresses of an account", "keys that follow their account"];
/** PostgreSQL has TRUNCATE, which its row triggers do not see: one more migration refuses it on the trail. */
const NEW_POSTGRES_MIGRATIONS = [
  ...NEW_MIGRATIONS,
  "the audit trail never truncated",
  SCOPES_MIGRATION,
  ...ACCOUNTS_MIGRATIONS,
];

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

const databases = usePostgresDatabases();

/** The rows of a query, read as an operator's own tool would. */
async function rowsOf<T>(db: string, query: string): Promise<T[]> {
  if (db.startsWith("file:")) {
    const rows = execFileSync("sqlite3", ["-json", db.slice("file:".length), query], { encoding: "utf8" });
    return (rows.trim() === "" ? [] : JSON.parse(rows)) as T[];
  }
  const sql = postgres(db, { max: 1, onnotice: () => {} });
  try {
    return [...(await sql.unsafe<T[]>(query))];
  } finally {
    await sql.end();
  }
}

/** The versions in `schema_migrations`, in order. */
const migrations = (db: string) =>
  rowsOf<{ version: number; name: string }>(db, "SELECT version, name FROM schema_migrations ORDER BY version");

/** The binary's command line, failing the test with its stderr when it does not exit 0; `--json` output parsed. */
// biome-ignore lint/suspicious/noExplicitAny: a test reads the printed JSON's fields freely
async function petstore(args: string[]): Promise<any> {
  const result = await cli(args);
  if (result.code !== 0) throw new Error(`petstore ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
  return args.includes("--json") ? JSON.parse(result.stdout) : result.stdout;
}

/** Requests until the answer satisfies `done`, every 100 ms for at most 6 s: a server's key cache holds a record up to 5 s. */
async function answerOnceCacheExpired(
  request: () => Promise<Response>,
  done: (response: Response) => boolean,
): Promise<Response> {
  let response!: Response;
  await waitFor(
    async () => {
      response = await request();
      return done(response);
    },
    6_000,
    {
      every: 100,
      what: () =>
        `an answer where ${String(done)}; the last was ${response?.status} ${JSON.stringify([...(response?.headers ?? [])])}`,
    },
  );
  return response;
}

describe.each([
  {
    engine: "libSQL",
    keys: OLD_KEYS.libsql,
    versionsBefore: [1, 2, 3, 4, 5],
    newMigrations: [...NEW_MIGRATIONS, SCOPES_MIGRATION, ...ACCOUNTS_MIGRATIONS],
    async load() {
      const db = tempDatabaseUrl();
      execFileSync("sqlite3", [db.slice("file:".length)], {
        input: readFileSync(join(FIXTURES, "pre-issue-29.libsql.sql")),
      });
      return db;
    },
  },
  {
    engine: "PostgreSQL",
    keys: OLD_KEYS.postgres,
    versionsBefore: [1, 2],
    newMigrations: NEW_POSTGRES_MIGRATIONS,
    async load() {
      const db = await databases.create("upgrade");
      execFileSync(
        join(POSTGRES_BIN, "psql"),
        [
          "--quiet",
          "--no-psqlrc",
          "-v",
          "ON_ERROR_STOP=1",
          "--dbname",
          db,
          "--file",
          join(FIXTURES, "pre-issue-29.postgres.sql"),
        ],
        { stdio: "pipe" },
      );
      return db;
    },
  },
])(
  "keys made before issue 29, on a $engine database today's binary upgrades",
  ({ keys, versionsBefore, newMigrations, load }) => {
    // One world per engine, built in order: the old database, today's server on it, then the
    // commands an operator runs on the keys it finds there.
    let startedAt: number;
    let db: string;
    let before: { version: number; name: string }[];
    let server: Awaited<ReturnType<typeof startServer>>;
    beforeAll(async () => {
      startedAt = Date.now();
      db = await load();
      before = await migrations(db);
      server = await startServer(binaryServe(db));
    }, 60_000);

    const ownAccount = (key: OldKey) => `acct_${key.id.slice("key_".length)}`;
    const shown = async (key: OldKey) => await petstore(["keys", "show", key.id, "--db", db, "--json"]);
    /** A use is written within 10 s: before that, none; after, not older than this run. */
    const lastUse = (view: { lastUsedAt: string | null }) =>
      view.lastUsedAt === null || Date.parse(view.lastUsedAt) >= startedAt;
    const unchanged = {
      expiresAt: null,
      rolling: null,
      scopes: ["pets:read", "pets:write", "orders:read"],
      allowFrom: null,
    };
    let rolled: { key: string; rolling: { until: string } };

    it("hold the versions of the release before issue 29", () => {
      expect(before.map((row) => row.version)).toEqual(versionsBefore);
    });

    it("are migrated at the server's start: the old versions kept, the new ones appended in order", async () => {
      const after = await migrations(db);
      expect(after.slice(0, before.length)).toEqual(before);
      const last = versionsBefore.at(-1)!;
      expect(after.slice(before.length)).toEqual(
        newMigrations.map((name, index) => ({ version: last + 1 + index, name })),
      );
      expect((await fetch(new URL("/healthz", server.url))).status).toBe(200);
    });

    it("are each the one key of an account of its own, with its plan and limits", async () => {
      const accounts = await rowsOf<Record<string, unknown>>(
        db,
        `SELECT k.id AS key, a.id, a.name, a.plan, a.per_minute, a.per_day, (SELECT count(*) FROM api_keys AS o WHERE o.account_id = a.id) AS keys
          FROM api_keys AS k JOIN accounts AS a ON a.id = k.account_id ORDER BY k.created_at`,
      );
      expect(accounts.map((row) => ({ ...row, per_minute: row.per_minute ?? null, keys: Number(row.keys) }))).toEqual([
        {
          key: keys.free.id,
          id: ownAccount(keys.free),
          name: "free before issue 29",
          plan: "free",
          per_minute: null,
          per_day: null,
          keys: 1,
        },
        {
          key: keys.enterprise.id,
          id: ownAccount(keys.enterprise),
          name: expect.any(String),
          plan: "enterprise",
          per_minute: 5_000,
          per_day: 250_000,
          keys: 1,
        },
        {
          key: keys.revoked.id,
          id: ownAccount(keys.revoked),
          name: expect.any(String),
          plan: "pro",
          per_minute: null,
          per_day: null,
          keys: 1,
        },
      ]);
    });

    it("are served by the new statements with their limits, the revoked one refused", async () => {
      const free = await client(server.url, keys.free.key)("/v1/pets?limit=1");
      expect([free.status, free.headers.get("x-ratelimit-limit")]).toEqual([200, "60"]);
      const enterprise = await client(server.url, keys.enterprise.key)("/v1/pets?limit=1");
      expect([
        enterprise.status,
        enterprise.headers.get("x-ratelimit-limit"),
        enterprise.headers.get("ratelimit-policy"),
      ]).toEqual([200, "5000", '"minute";q=5000;w=60, "day";q=250000;w=86400']);
      const revoked = await client(server.url, keys.revoked.key)("/v1/pets?limit=1");
      expect([revoked.status, ((await revoked.json()) as { code: string }).code]).toEqual([401, "unauthorized"]);
    });

    it("are listed in the order they were made, with no last use older than this run", async () => {
      const listed = (await petstore(["keys", "list", "--db", db, "--json"])) as {
        id: string;
        lastUsedAt: string | null;
      }[];
      expect(listed.map((view) => view.id)).toEqual([keys.free.id, keys.enterprise.id, keys.revoked.id]);
      expect(listed.every(lastUse)).toBe(true);
    });

    it("are shown with the new fields empty: no expiry, no roll, every scope from any address", async () => {
      const shownFree = await shown(keys.free);
      expect(shownFree).toMatchObject({
        ...unchanged,
        plan: "free",
        perMinute: 60,
        perDay: 1_000,
        label: "free before issue 29",
        revokedAt: null,
      });
      expect(lastUse(shownFree)).toBe(true);
      // Made by the old release, not at the upgrade.
      expect(Date.parse(shownFree.createdAt)).toBeLessThan(startedAt);
      expect(await shown(keys.enterprise)).toMatchObject({
        ...unchanged,
        plan: "enterprise",
        perMinute: 5_000,
        perDay: 250_000,
        revokedAt: null,
      });
    });

    it("show the revoked key unused, revoked by the old release", async () => {
      const shownRevoked = await shown(keys.revoked);
      expect(shownRevoked).toMatchObject({
        ...unchanged,
        plan: "pro",
        lastUsedAt: null,
        revokedAt: expect.any(String),
      });
      expect(Date.parse(shownRevoked.revokedAt)).toBeLessThan(startedAt);
    });

    it("take an update of the minute limit on the key and its own account, its day limit kept", async () => {
      await petstore(["keys", "update", keys.enterprise.id, "--per-minute", "7000", "--db", db]);
      expect(await shown(keys.enterprise)).toMatchObject({ perMinute: 7_000, perDay: 250_000 });
      expect(
        await rowsOf(db, `SELECT per_minute, per_day FROM accounts WHERE id = '${ownAccount(keys.enterprise)}'`),
      ).toEqual([{ per_minute: 7_000, per_day: 250_000 }]);
    });

    it("see the running server apply the update once its key cache lets the record go", async () => {
      const updated = await answerOnceCacheExpired(
        () => client(server.url, keys.enterprise.key)("/v1/pets?limit=1"),
        (response) => response.headers.get("x-ratelimit-limit") === "7000",
      );
      expect(updated.status).toBe(200);
    });

    it("roll: the old secret answers with Sunset at the overlap's end", async () => {
      rolled = await petstore(["keys", "roll", keys.free.id, "--overlap", "1h", "--db", db, "--json"]);
      expect(rolled).toMatchObject({
        id: keys.free.id,
        plan: "free",
        rolling: { since: expect.any(String), until: expect.any(String) },
      });
      const old = await answerOnceCacheExpired(
        () => client(server.url, keys.free.key)("/v1/pets?limit=1"),
        (response) => response.headers.has("sunset"),
      );
      expect([old.status, old.headers.get("sunset")]).toEqual([200, new Date(rolled.rolling.until).toUTCString()]);
    });

    it("roll: the new secret answers with the key's limit and no Sunset", async () => {
      const fresh = await client(server.url, rolled.key)("/v1/pets?limit=1");
      expect([fresh.status, fresh.headers.get("x-ratelimit-limit"), fresh.headers.has("sunset")]).toEqual([
        200,
        "60",
        false,
      ]);
    });

    it("refuse an update of the revoked key: it stays revoked for the new commands", async () => {
      const refused = await cli(["keys", "update", keys.revoked.id, "--per-minute", "7000", "--db", db]);
      expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining(`${keys.revoked.id} was revoked at`)]);
    });

    it("have an audit trail that begins at the upgrade: the old release recorded no creation", async () => {
      const trail = async (key: OldKey) =>
        ((await petstore(["audit", "--key", key.id, "--db", db, "--json"])) as { action: string }[]).map(
          (entry) => entry.action,
        );
      expect([await trail(keys.free), await trail(keys.enterprise), await trail(keys.revoked)]).toEqual([
        ["roll"],
        ["update"],
        [],
      ]);
    });

    it("have their last use and usage written when servers stop; a revoked key's 401s count as its own, and are no use", async () => {
      const another = await startServer(binaryServe(db));
      expect((await client(another.url, keys.enterprise.key)("/v1/pets?limit=1")).status).toBe(200);
      expect((await client(another.url, keys.revoked.key)("/v1/pets?limit=1")).status).toBe(401);
      await Promise.all([server, another].map((each) => stopProcess(each.child, "SIGTERM")));
      const used = await shown(keys.enterprise);
      expect(Date.parse(used.lastUsedAt!)).toBeGreaterThanOrEqual(startedAt);
      expect((await shown(keys.revoked)).lastUsedAt).toBeNull();
      const usage = await petstore(["keys", "usage", keys.revoked.id, "--since", "1h", "--db", db, "--json"]);
      expect(usage.totals).toEqual({ admitted: 0, rateLimited: 0, banned: 0, unauthorized: 2 });
    }, 40_000);
  },
);
