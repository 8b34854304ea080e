import { type Client, createClient } from "@libsql/client";
import { StorageUnavailableError } from "@petstore/core";
import { database } from "./_database.js";

const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

/**
 * Opens a client: `file:path.db`, `:memory:`, `libsql://...` or `http(s)://...` (+ authToken).
 * For local files sets WAL and a busy timeout (PRAGMAs only for local files; a remote server
 * rejects them). The caller owns the client and closes it.
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
}): Promise<Client> {
  const timeout = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  const local = options.url === ":memory:" || options.url.startsWith("file:");
  if (local) {
    // `timeout` is SQLite's busy timeout, set on every connection of the client's pool (a
    // `PRAGMA busy_timeout` would reach only the one connection that ran it).
    const client = createClient({ url: options.url, timeout });
    if (options.url !== ":memory:" && !options.url.startsWith("file::memory:")) {
      // WAL lets readers work while one process writes, and is stored in the file, so one
      // statement covers every connection. `synchronous` stays FULL (the default): a 201 is
      // only sent for a write that survives a power cut.
      await database(client)
        .execute("PRAGMA journal_mode = WAL")
        .catch((error: unknown) => {
          client.close();
          throw error;
        });
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
