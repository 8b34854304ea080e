// The store's clock, in each SQL dialect: the instant a statement decides at (a window, a ban,
// a record's age, a sweep) is read inside the statement, on the database, so every server on
// one database decides by one clock however far off its own is. Where a statement takes
// `:now`, a value given (a test's clock) stands in for the store's; NULL means the store's.

/**
 * SQLite's clock, Unix ms: `'now'` is read once per statement step, to the millisecond, and is
 * the same wherever the statement uses it. On a local file that is this machine's clock; on D1,
 * a Durable Object or a libSQL server, the database's.
 */
export const SQLITE_NOW = "CAST(round((julianday('now') - 2440587.5) * 86400000) AS INTEGER)";

/**
 * PostgreSQL's clock, Unix ms: the instant the server received the statement, the same
 * wherever the statement uses it (`statement_timestamp()` is stable within a statement).
 */
export const POSTGRES_NOW = "floor(extract(epoch FROM statement_timestamp()) * 1000)::bigint";

/**
 * PostgreSQL's clock when it is read, Unix ms: for a decision made on a locked row, read once
 * (in a subquery) after the lock is taken, so that the decisions on one row are stamped in
 * the order they are made. By `statement_timestamp()` a statement that waited for the lock
 * would be stamped before the one it waited for, by as long as it waited.
 */
export const POSTGRES_CLOCK_NOW = "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/** The option every adapter over a shared store takes. */
export interface StoreClockOptions {
  /**
   * Unix ms: decide windows, bans and records' ages by this clock instead of the store's. For
   * tests that move time without sleeping; a server leaves it out, so that its fleet shares
   * the store's one clock.
   */
  clock?: (() => number) | undefined;
}
