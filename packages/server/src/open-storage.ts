import { checkLibsql, libsqlAdapters, migrate } from "@petstore/adapters/libsql";
import { connectLibsql, type StorageObserver } from "@petstore/adapters/libsql/connect";
import { memoryAdapters } from "@petstore/adapters/memory";
import type { ApiKeys, IdempotencyStore, PetStore, RateLimiter } from "@petstore/core";

/** Where the data lives, as `connectLibsql` takes it; read from flags and the environment by `commands/_options.ts`. */
export interface DbConfig {
  url: string;
  authToken?: string;
  busyTimeoutMs?: number;
}

/** The four ports over one database, a health check, and the way to close it. */
export interface Storage {
  adapters: { store: PetStore; keys: ApiKeys; limiter: RateLimiter; idempotency: IdempotencyStore };
  /** Resolves when the database takes reads and writes now; rejects with the reason. */
  check(): Promise<void>;
  close(): void;
}

/**
 * Connects to the database and brings its schema up to date (migrations are idempotent and
 * safe when several processes start at once). `:memory:` is private to this process and
 * gone at exit, so it is served by the memory adapters: the same contract, exactly as
 * exact, without a SQL engine on every request.
 */
export async function openStorage(db: DbConfig, observer?: StorageObserver): Promise<Storage> {
  if (db.url === ":memory:") return { adapters: memoryAdapters(), check: async () => {}, close: () => {} };
  // The observer (metrics) hears a local file's group commits and fsyncs.
  const connection = await connectLibsql(observer ? { ...db, observer } : db);
  try {
    await migrate(connection);
  } catch (error) {
    connection.close();
    throw error;
  }
  return {
    adapters: libsqlAdapters(connection),
    check: () => checkLibsql(connection),
    close: () => connection.close(),
  };
}
