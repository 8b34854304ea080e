import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient } from "@libsql/client";
import { afterEach, beforeEach } from "vitest";
import { type LibsqlSource, migrateLibsql } from "@petstore/adapters/libsql";
import { connectLibsql } from "@petstore/adapters/libsql/connect";

// Test support (imports vitest): kept out of the packages' sources.

/**
 * A plain `@libsql/client` client on a file, as a remote URL would be served: every statement
 * through `execute`/`batch`, none of `connectLibsql`'s local fast path. The same SQL a libSQL
 * server would receive. WAL (which a server has) is set here.
 */
export async function plainClient(url: string, busyTimeoutMs = 5_000): Promise<Client> {
  const client = createClient({ url, timeout: busyTimeoutMs });
  await client.execute("PRAGMA journal_mode = WAL");
  return client;
}

/** A database the adapters run on, and how to close it. */
type Opened = LibsqlSource & { close(): void };

/**
 * For tests: a migrated database file in a fresh temporary directory. `connect` opens more
 * sources on it (as other processes would); `close` closes them all and removes the directory.
 * `plain`: the sources are plain clients (see `plainClient`), not `connectLibsql`'s connections.
 */
export async function tempDatabase(options: { plain?: boolean } = {}) {
  const dir = await mkdtemp(join(tmpdir(), "petstore-libsql-"));
  const path = join(dir, "petstore.db");
  const url = `file:${path}`;
  const opened: Opened[] = [];
  const connect = async (busy: { busyTimeoutMs?: number } = {}): Promise<Opened> => {
    let source: Opened;
    if (options.plain) {
      const client = await plainClient(url, busy.busyTimeoutMs);
      source = { client, close: () => client.close() };
    } else {
      source = await connectLibsql({ url, ...busy });
    }
    opened.push(source);
    return source;
  };
  const db = await connect();
  await migrateLibsql(db);
  /** Rows of one statement of the test's own, on a connection of its own. */
  const query = async (sql: string): Promise<Record<string, unknown>[]> => {
    const own = await connectLibsql({ url });
    try {
      return await own.execute(sql);
    } finally {
      own.close();
    }
  };
  return {
    dir,
    path,
    url,
    db,
    connect,
    query,
    close: async () => {
      for (const each of opened) each.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh `tempDatabase()` for every test of the calling `describe`, closed after it. */
export function useTempDatabase(): () => Awaited<ReturnType<typeof tempDatabase>> {
  let database: Awaited<ReturnType<typeof tempDatabase>> | undefined;
  beforeEach(async () => {
    database = await tempDatabase();
  });
  afterEach(async () => {
    await database?.close();
  });
  return () => database!;
}
