import { execFileSync } from "node:child_process";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usePostgresDatabases } from "../_support/postgres-database.js";
import { ensureBinary } from "./_binary.js";
import { client } from "./_http.js";
import { binaryServe, cleanUp, cli, createKey, startServer, stopProcess, tempDatabaseUrl } from "./_processes.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

const databases = usePostgresDatabases();

/** One statement on the database, as an operator's own tool would run it. */
async function alter(db: string, statement: string): Promise<void> {
  if (db.startsWith("file:")) {
    execFileSync("sqlite3", [db.slice("file:".length), statement]);
    return;
  }
  const sql = postgres(db, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(statement);
  } finally {
    await sql.end();
  }
}

/** stderr without the usage reminder. */
const errorLines = (stderr: string) =>
  stderr
    .trimEnd()
    .split("\n")
    .filter((line) => line !== "");

/** A schema this binary does not know, or one changed by hand, is named instead of served. */
describe.each([
  ["libSQL", async () => tempDatabaseUrl()],
  ["PostgreSQL", () => databases.create("schema")],
])("the binary on a %s database", (_, newDatabase) => {
  it("refuses in one line a database a newer release migrated (a version it does not know)", async () => {
    const db = await newDatabase();
    await createKey(db);
    await alter(db, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'from a newer release', 0)");
    for (const command of [
      ["serve", "--host", "127.0.0.1", "--port", "0"],
      ["keys", "list"],
    ]) {
      const result = await cli([...command, "--db", db]);
      expect({ command, code: result.code }).toEqual({ command, code: 1 });
      const lines = errorLines(result.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^petstore: cannot open .*: the database's schema has version 99, newer than this petstore knows \(up to \d+\): a newer release migrated it; run that release or a newer one$/,
      );
    }
  }, 60_000);

  it("answers /healthz 503 naming a column dropped by hand, and refuses to start on it", async () => {
    const db = await newDatabase();
    const { key } = await createKey(db);
    const server = await startServer(binaryServe(db));
    expect((await fetch(new URL("/healthz", server.url))).status).toBe(200);
    // SQLite drops no column an index uses: the index goes first, as a hand-made change would do.
    await alter(db, "DROP INDEX pets_by_status");
    await alter(db, "ALTER TABLE pets DROP COLUMN status");
    const health = await fetch(new URL("/healthz", server.url));
    expect(health.status).toBe(503);
    expect(((await health.json()) as { reason: string }).reason).toBe(
      "the database lacks pets.status, which petstore's statements need (changed outside petstore?)",
    );
    expect((await client(server.url, key)("/v1/pets")).status).toBe(500);
    await stopProcess(server.child, "SIGTERM");
    const again = await cli(["serve", "--host", "127.0.0.1", "--port", "0", "--db", db]);
    expect(again.code).toBe(1);
    expect(errorLines(again.stderr)).toEqual([
      expect.stringMatching(
        /^petstore: cannot serve .*: the database lacks pets\.status, which petstore's statements need \(changed outside petstore\?\)$/,
      ),
    ]);
  }, 60_000);
});
