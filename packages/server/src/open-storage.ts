import { connectLibsql, libsqlAdapters, migrate } from "@petstore/adapters/libsql";
import type { DbConfig } from "./commands/_options.js";

/** The four ports over one libSQL database, a liveness check, and the way to close it. */
export interface Storage {
  adapters: ReturnType<typeof libsqlAdapters>;
  /** Resolves when the database answers `SELECT 1`. */
  ping(): Promise<void>;
  close(): void;
}

/**
 * Connects to the database and brings its schema up to date (migrations are idempotent and
 * safe when several processes start at once).
 */
export async function openStorage(db: DbConfig): Promise<Storage> {
  const client = await connectLibsql(db);
  try {
    await migrate(client);
  } catch (error) {
    client.close();
    throw error;
  }
  return {
    adapters: libsqlAdapters({ client }),
    ping: async () => {
      await client.execute("SELECT 1");
    },
    close: () => client.close(),
  };
}
