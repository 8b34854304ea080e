import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient } from "@libsql/client";
import { connectLibsql } from "./connect-libsql.js";
import { migrate } from "./migrations.js";

/**
 * A plain `@libsql/client` client on a file, as the adapters get for a remote URL: every
 * statement through `execute`/`batch`, none of `connectLibsql`'s local fast path. The same
 * SQL a libSQL server would receive. WAL (which a server has) is set here.
 */
export async function plainClient(url: string, busyTimeoutMs = 5_000): Promise<Client> {
  const client = createClient({ url, timeout: busyTimeoutMs });
  await client.execute("PRAGMA journal_mode = WAL");
  return client;
}

/**
 * For tests: a migrated database file in a fresh temporary directory. `connect` opens more
 * clients on it (as other processes would); `close` closes them all and removes the directory.
 * `plain`: the clients are plain ones (see `plainClient`), not `connectLibsql`'s.
 */
export async function tempDatabase(options: { plain?: boolean } = {}) {
  const dir = await mkdtemp(join(tmpdir(), "petstore-libsql-"));
  const path = join(dir, "petstore.db");
  const url = `file:${path}`;
  const clients: Client[] = [];
  const connect = async (busy: { busyTimeoutMs?: number } = {}) => {
    const client = options.plain ? await plainClient(url, busy.busyTimeoutMs) : await connectLibsql({ url, ...busy });
    clients.push(client);
    return client;
  };
  const client = await connect();
  await migrate(client);
  return {
    dir,
    path,
    url,
    client,
    connect,
    close: async () => {
      for (const each of clients) each.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
