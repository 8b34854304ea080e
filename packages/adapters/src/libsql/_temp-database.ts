import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@libsql/client";
import { connectLibsql } from "./connect-libsql.js";
import { migrate } from "./migrations.js";

/**
 * For tests: a migrated database file in a fresh temporary directory. `connect` opens more
 * clients on it (as other processes would); `close` closes them all and removes the directory.
 */
export async function tempDatabase() {
  const dir = await mkdtemp(join(tmpdir(), "petstore-libsql-"));
  const path = join(dir, "petstore.db");
  const url = `file:${path}`;
  const clients: Client[] = [];
  const connect = async (options: { busyTimeoutMs?: number } = {}) => {
    const client = await connectLibsql({ url, ...options });
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
