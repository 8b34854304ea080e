import { storageErrors } from "../_storage-errors.js";

/**
 * SQLSTATE classes and codes that mean "the database cannot be used right now" rather than
 * "this statement is wrong": a connection lost or refused, the server shutting down or out of
 * resources, a statement cancelled (timeout), a transaction to retry (serialization failure,
 * deadlock, lock not available), a write sent to a standby (read-only: the primary is elsewhere).
 */
const UNAVAILABLE_CLASSES = ["08", "53", "57", "58"];
const UNAVAILABLE_STATES = new Set(["40001", "40P01", "55P03", "55000", "25006"]);

/** Socket and client errors of postgres.js and Bun.sql that mean the same. */
const CLIENT_CODES =
  /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE|CONNECTION_.+|CONNECT_TIMEOUT|ERR_POSTGRES_(CONNECTION_.+|.*TIMEOUT.*|.*CLOSED.*))$/;

/** The five-character SQLSTATE of a server error (postgres.js: `code`; Bun.sql: `errno`), if it has one. */
export function sqlState(error: unknown): string | undefined {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown };
  for (const candidate of [code, errno])
    if (typeof candidate === "string" && /^[0-9A-Z]{5}$/.test(candidate)) return candidate;
  return undefined;
}

/** The adapters' failure for a Postgres error (see `storageErrors`). */
export const storageError = storageErrors((cause) => {
  const state = sqlState(cause);
  if (state !== undefined && (UNAVAILABLE_STATES.has(state) || UNAVAILABLE_CLASSES.includes(state.slice(0, 2)))) {
    // The server's own words: "sorry, too many clients already" names the cause, 53300 does not.
    return `the Postgres server cannot serve now (${state}: ${cause.message.split("\n")[0]})`;
  }
  const code = (cause as { code?: unknown }).code;
  // A client told to use TLS (sslmode=require) by a server without it: the socket closes mid-handshake.
  if (/before secure TLS connection was established/.test(cause.message)) {
    return `the Postgres server closed the connection before TLS was set up (${String(code)}): the URL asks for TLS (sslmode=require or stronger); does the server have ssl = on?`;
  }
  if (typeof code === "string" && CLIENT_CODES.test(code)) return `the Postgres server is unreachable (${code})`;
  return undefined;
});
