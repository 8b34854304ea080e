import { firstLine } from "../messages/first-line.js";
import { hostPort } from "../cli/host-port.js";
import { connect } from "node:net";
import type { Sql } from "postgres";
import { tlsFailure } from "../messages/tls-failure.js";
import { statementPooling } from "./transaction-pooling.js";

/** PostgreSQL's SSLRequest: length 8, code 80877103. The server answers one byte: S (TLS) or N. */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);
const PROBE_TIMEOUT_MS = 2_000;

/** The hosts and ports of a `postgres://` URL, several or one (default port 5432). */
function addresses(url: string): { host: string; port: number }[] {
  const authority = url.slice(url.indexOf("://") + 3).split(/[/?]/)[0]!;
  return authority
    .slice(authority.lastIndexOf("@") + 1)
    .split(",")
    .map((text) => {
      const address = hostPort(text);
      return { host: address?.host ?? text, port: Number(address?.port ?? 5432) };
    });
}

/** What the server at `host:port` answers an SSLRequest: "S", "N", or undefined when it does not (down, not PostgreSQL). */
function sslAnswer(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (answer: string | undefined) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(undefined));
    socket.once("error", () => done(undefined));
    socket.once("connect", () => socket.write(SSL_REQUEST));
    socket.once("data", (data: Buffer) => done(String.fromCharCode(data[0]!)));
  });
}

/**
 * Why the server could not migrate (or probe) a Postgres database at start, in one line: a
 * pooler in statement mode, a server that does not speak TLS when the URL asks for it, a TLS
 * failure (the certificate not trusted, or for another name), else the error's message.
 * Asked only once something failed.
 */
export async function postgresStartFailure(error: unknown, setup: Sql, url: string): Promise<string> {
  if (await statementPooling(setup))
    return "a pooler in statement mode (PgBouncer's pool_mode = statement) refused a transaction: use transaction or session pooling";
  const sslmode =
    /[?&](sslmode|ssl)=([^&]*)/.exec(url)?.[2] ?? (/[?&]sslrootcert=/.test(url) ? "verify-full" : undefined);
  if (sslmode !== undefined && ["require", "verify-ca", "verify-full"].includes(sslmode)) {
    for (const { host, port } of addresses(url)) {
      if ((await sslAnswer(host, port)) === "N")
        return `TLS: the server at ${host}:${port} does not accept TLS connections (sslmode=${sslmode})`;
    }
  }
  return tlsFailure(error) ?? firstLine(error);
}
