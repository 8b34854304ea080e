import { createClient } from "@libsql/client";
import { StorageUnavailableError } from "@petstore/core";
import NativeDatabase from "libsql";
import { clientEngine } from "../_client-engine.js";
import { type LibsqlConnection, libsqlConnection as connection } from "../_source.js";
import { fileIdentity } from "./_file-identity.js";
import { walSyncOf } from "./_wal-sync.js";
import { localEngine, type StorageObserver } from "./local-engine.js";

const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

export interface ConnectLibsqlOptions {
  /** `file:path.db`, `:memory:`, `libsql://...` or `http(s)://...`. */
  url: string;
  /** For a remote server; ignored for local files. */
  authToken?: string;
  /**
   * How long a statement waits for the database before its request gets a 503: on a local
   * file, for another connection's write lock; on a remote server, for the answer. Default 5000.
   */
  busyTimeoutMs?: number;
  /** Told of a local database's group commits and WAL fsyncs (for metrics). */
  observer?: StorageObserver;
}

/** Where a database URL's data lives: in this process's memory, in a local file, or elsewhere (a server). */
export type DatabaseLocation = { kind: "memory" } | { kind: "file"; path: string } | { kind: "remote" };

/**
 * Where `url` keeps its data: `:memory:` and `file::memory:` in memory; `file:relative.db`,
 * `file:/abs.db`, `file:///abs.db` (percent-escapes decoded, query dropped) a local file;
 * anything else a server. The one place these URLs are read, by the library and the binary.
 * @throws TypeError for a `file:` URL that names a host or no path.
 */
export function databaseLocation(url: string): DatabaseLocation {
  if (url === ":memory:" || url.startsWith("file::memory:")) return { kind: "memory" };
  if (!url.startsWith("file:")) return { kind: "remote" };
  let rest = url.slice("file:".length).replace(/[?#].*$/, "");
  if (rest.startsWith("//")) {
    const slash = rest.indexOf("/", 2);
    const host = rest.slice(2, slash === -1 ? undefined : slash);
    if (host !== "" && host !== "localhost") throw new TypeError(`A file: URL names no host: ${url}`);
    rest = slash === -1 ? "" : rest.slice(slash);
  }
  const path = decodeURIComponent(rest);
  if (path === "") throw new TypeError(`A file: URL needs a path: ${url}`);
  return { kind: "file", path };
}

/**
 * Opens a database for the libSQL adapters: `file:path.db` (in WAL mode, with a busy timeout),
 * `:memory:`, or a remote `libsql://` / `http(s)://` server (+ `authToken`). A local database
 * gets the fast path: one native connection of the `libsql` package with prepared statements,
 * group commit and the WAL fsynced beside the event loop. A remote one gets a `@libsql/client`
 * client whose requests fail (a 503) when the server is down or silent. Node, Bun and Deno;
 * on the edge, hand the adapters a `Client` of `@libsql/client/web` instead. The caller closes it.
 * @example
 * const db = await connectLibsql({ url: "file:petstore.db" });
 * await migrateLibsql(db);
 * const petstore = createPetstore(libsqlAdapters(db));
 */
export async function connectLibsql(options: ConnectLibsqlOptions): Promise<LibsqlConnection> {
  const timeout = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  const { url, observer } = options;
  const location = databaseLocation(url);
  if (location.kind === "memory") {
    // An in-memory database exists only on the connection that made it: the engine keeps one.
    const memory = new NativeDatabase(":memory:");
    const engine = localEngine(() => memory, { inMemory: true, ...(observer && { observer }) });
    return connection(engine, () => engine.close());
  }
  if (location.kind === "file") {
    const { path } = location;
    let first: NativeDatabase.Database | undefined = new NativeDatabase(path, { timeout });
    let mode: unknown;
    try {
      // WAL lets readers work while one process writes, and is stored in the file, so one
      // statement covers every connection.
      mode = (first.prepare("PRAGMA journal_mode = WAL").get([]) as { journal_mode?: unknown } | undefined)
        ?.journal_mode;
    } catch (error) {
      first.close();
      throw error;
    }
    // A database SQLite could not put in WAL mode (a file system without shared memory) has no
    // WAL to fsync: its commits fsync themselves.
    const walSync = mode === "wal" ? walSyncOf(path) : undefined;
    const engine = localEngine(
      () => {
        // The first connection is the one that set WAL; later ones are opened anew.
        const opened = first ?? new NativeDatabase(path, { timeout });
        first = undefined;
        return opened;
      },
      {
        ...(walSync && { walSync }),
        wal: mode === "wal",
        ...(mode === "wal" && { walPath: `${path}-wal` }),
        files: fileIdentity(path),
        ...(observer && { observer }),
      },
    );
    return connection(engine, () => {
      first?.close();
      engine.close();
    });
  }
  const client = createClient({
    url,
    ...(options.authToken === undefined ? {} : { authToken: options.authToken }),
    // A server that is down or never answers must fail the request (a 503), not hang it.
    fetch: (request: Request) =>
      fetch(request, { signal: AbortSignal.any([request.signal, AbortSignal.timeout(timeout)]) }).catch(
        (error: unknown) => {
          throw new StorageUnavailableError("the libSQL server is unreachable", { cause: error });
        },
      ),
  });
  return connection(clientEngine(client), () => client.close());
}
