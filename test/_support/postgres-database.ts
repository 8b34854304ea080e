// Test support (imports vitest): a database of the shared test server per suite, a schema per test.
import { migratePostgres, type PostgresSource } from "@petstore/adapters/postgres";
import postgres from "postgres";
import { afterAll, inject } from "vitest";

let made = 0;

/** A name no other suite of this run uses. */
const uniqueName = (prefix: string) => `${prefix}_${process.pid}_${Date.now().toString(36)}_${made++}`;

/** A client of postgres.js on `url`, quiet about notices; `search_path` when given. */
export function postgresClient(url: string, options: { max?: number; schema?: string } = {}) {
  return postgres(url, {
    max: options.max ?? 4,
    onnotice: () => {},
    ...(options.schema === undefined ? {} : { connection: { search_path: options.schema } }),
  });
}

/** A database's `default_transaction_isolation`, as an operator may set it with ALTER DATABASE. */
export type Isolation = "read committed" | "repeatable read" | "serializable";

/**
 * A database of its own for the calling suite file, on the server the run's globalSetup
 * started, dropped after the suite. `fresh()` makes a new migrated schema in it (the tables
 * a test sees are empty) with a client of its own; `close` ends that client. `isolation`:
 * the database's default transaction isolation (ALTER DATABASE ... SET), for suites that must
 * hold under any.
 */
export function usePostgresDatabase(settings: { isolation?: Isolation } = {}) {
  const serverUrl = inject("postgresUrl");
  if (!serverUrl)
    throw new Error("No PostgreSQL server: vitest.config.ts starts one (test/_support/postgres-global-setup.ts)");
  const name = uniqueName("suite");
  const url = serverUrl.replace(/\/[^/]*$/, `/${name}`);
  const admin = postgresClient(serverUrl, { max: 1 });
  let created: Promise<unknown> | undefined;
  const clients: ReturnType<typeof postgres>[] = [];

  afterAll(async () => {
    await Promise.all(clients.splice(0).map((client) => client.end({ timeout: 5 })));
    if (created) await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end({ timeout: 5 });
  });

  /** A fresh migrated schema and a client whose `search_path` is it. */
  async function fresh(options: { max?: number } = {}): Promise<{
    source: PostgresSource & { sql: ReturnType<typeof postgres> };
    schema: string;
    close(): Promise<void>;
  }> {
    created ??= admin
      .unsafe(`CREATE DATABASE ${name}`)
      .then(() =>
        settings.isolation === undefined
          ? undefined
          : admin.unsafe(`ALTER DATABASE ${name} SET default_transaction_isolation = '${settings.isolation}'`),
      );
    await created;
    const schema = uniqueName("t");
    const sql = postgresClient(url, { ...options, schema });
    clients.push(sql);
    await sql.unsafe(`CREATE SCHEMA ${schema}`);
    const source = { sql };
    await migratePostgres(source);
    return { source, schema, close: () => sql.end({ timeout: 5 }) };
  }

  /** Another client (its own pool, as another process has) on the schema of `source`, ended by the suite's end at the latest. */
  async function client(source: { sql: ReturnType<typeof postgres> }): Promise<{ sql: ReturnType<typeof postgres> }> {
    const schema = (await source.sql.unsafe("SELECT current_schema() AS schema"))[0]!.schema as string;
    const sql = postgresClient(url, { schema });
    clients.push(sql);
    return { sql };
  }

  /**
   * Runs `use` on a fresh schema through `count` clients of it, each its own pool (as processes
   * have; the first is `fresh()`'s), all ended afterwards.
   */
  async function onClients(
    count: number,
    use: (sources: { sql: ReturnType<typeof postgres> }[]) => Promise<void>,
  ): Promise<void> {
    const { source, close } = await fresh();
    const others = await Promise.all(Array.from({ length: count - 1 }, () => client(source)));
    try {
      await use([source, ...others]);
    } finally {
      await Promise.all(others.map((other) => other.sql.end({ timeout: 5 })));
      await close();
    }
  }

  return { url, fresh, client, onClients };
}

/**
 * Whole databases of their own on the run's server, for processes that connect by URL (the
 * binary): `create()` returns a new, empty database's URL (its tables are in `public`, as a
 * deployment's are); all are dropped after the suite.
 */
export function usePostgresDatabases() {
  const serverUrl = inject("postgresUrl");
  if (!serverUrl)
    throw new Error("No PostgreSQL server: vitest.config.ts starts one (test/_support/postgres-global-setup.ts)");
  const admin = postgresClient(serverUrl, { max: 1 });
  const names: string[] = [];
  afterAll(async () => {
    for (const name of names.splice(0)) await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end({ timeout: 5 });
  });
  return {
    /** The server's superuser URL (its `postgres` database), for ALTER DATABASE and the like. */
    serverUrl,
    async create(prefix = "db"): Promise<string> {
      const name = uniqueName(prefix);
      await admin.unsafe(`CREATE DATABASE ${name}`);
      names.push(name);
      return serverUrl.replace(/\/[^/]*$/, `/${name}`);
    },
  };
}
