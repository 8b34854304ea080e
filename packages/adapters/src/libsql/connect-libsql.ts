import { type Client, createClient } from "@libsql/client";
import { ConnectionPool, Sqlite3Client } from "@libsql/client/sqlite3";
import { StorageUnavailableError } from "@petstore/core";
import NativeDatabase from "libsql";
import { attachLocalDatabase, database } from "./_database.js";
import { fileIdentityOf } from "./_file-identity.js";
import { type LocalDatabaseOptions, localDatabase, type StorageObserver } from "./_local-database.js";
import { walSyncOf } from "./_wal-sync.js";

const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

/**
 * Opens a client: `file:path.db`, `:memory:`, `libsql://...` or `http(s)://...` (+ authToken).
 * For local files sets WAL and a busy timeout (PRAGMAs only for local files; a remote server
 * rejects them). For a local file or `:memory:` it also gives the adapters a connection of
 * their own with prepared statements and group commit; the client's `close` closes that one
 * too, and its `reconnect` reopens it. The caller owns the client and closes it.
 * @example const client = await connectLibsql({ url: "file:petstore.db" }); await migrate(client);
 */
export async function connectLibsql(options: {
  url: string;
  /** For a remote server; ignored for local files. */
  authToken?: string;
  /**
   * How long a statement waits for the database before its request gets a 503: on a local
   * file, for another connection's write lock; on a remote server, for the answer. Default 5000.
   */
  busyTimeoutMs?: number;
  /** A local file's group commits and WAL fsyncs, reported for metrics (`onBatch`, `onFsync`). */
  observer?: StorageObserver;
}): Promise<Client> {
  const timeout = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  if (options.url === ":memory:") return memoryClient(timeout);
  if (options.url.startsWith("file:")) {
    // `timeout` is SQLite's busy timeout, set on every connection of the client's pool (a
    // `PRAGMA busy_timeout` would reach only the one connection that ran it).
    const client = createClient({ url: options.url, timeout });
    if (options.url.startsWith("file::memory:")) return client;
    try {
      // WAL lets readers work while one process writes, and is stored in the file, so one
      // statement covers every connection. `synchronous` stays FULL (the default): a 201 is
      // only sent for a write that survives a power cut (see WriteOptions for the one exception).
      const mode = (await database(client).execute("PRAGMA journal_mode = WAL")).rows[0]?.journal_mode;
      // The file exactly as the client resolved the URL (relative paths, `file:///`, escapes);
      // none for a temporary database (`file:`), which no second connection could share.
      const { rows } = await client.execute("PRAGMA database_list");
      const path = rows.find((row) => row.name === "main")?.file;
      if (typeof path === "string" && path !== "") {
        // A database SQLite could not put in WAL mode (a file system without shared memory)
        // has no WAL to fsync: its commits fsync themselves.
        const files = fileIdentityOf(path);
        const walSync = mode === "wal" ? walSyncOf(path) : undefined;
        const observer = options.observer;
        withLocalDatabase(client, () => new NativeDatabase(path, { timeout }), { ...(walSync && { walSync }), ...(files && { files }), ...(observer && { observer }) });
      }
    } catch (error) {
      client.close();
      throw error;
    }
    return client;
  }
  return createClient({
    url: options.url,
    ...(options.authToken === undefined ? {} : { authToken: options.authToken }),
    // A server that is down or never answers must fail the request (a 503), not hang it.
    fetch: (request: Request) =>
      fetch(request, { signal: AbortSignal.any([request.signal, AbortSignal.timeout(timeout)]) }).catch((error: unknown) => {
        throw new StorageUnavailableError("The libSQL server is unreachable", { cause: error });
      }),
  });
}

/** Makes `client.close` and `client.reconnect` act on the adapters' connection as well. */
function withLocalDatabase(client: Client, connect: () => NativeDatabase.Database, options: LocalDatabaseOptions = {}): void {
  const local = localDatabase(connect, options);
  const close = client.close.bind(client);
  const reconnect = client.reconnect.bind(client);
  client.close = () => {
    local.close();
    close();
  };
  client.reconnect = async () => {
    await reconnect();
    local.reopen();
  };
  attachLocalDatabase(client, local);
}

/**
 * An in-memory database exists only on the connection that made it, so the adapters must share
 * the client's one connection. The client is built from the parts `createClient` uses (and
 * its defaults), around a pool whose one connection is borrowed and returned at once to learn
 * it: now, and again after `reconnect` replaced it.
 */
function memoryClient(timeout: number): Client {
  const pool = new ConnectionPool("file::memory:", { timeout }, 1);
  const client = new Sqlite3Client(pool, "number");
  const poolConnection = () => {
    const connection = pool.acquireSync();
    pool.release(connection);
    return connection;
  };
  let connection = poolConnection();
  withLocalDatabase(client, () => (connection.open ? connection : (connection = poolConnection())));
  return client;
}
