/** At most one "unavailable" line per this many milliseconds: a database that flaps is not a line per flap. */
const EVERY_MS = 10_000;

/**
 * What the server logs when its database stops answering and when it answers again, fed with
 * the changes `PostgresSource.onAvailabilityChange` reports: one `storage unavailable` line
 * with the reason (the database's own words where it gave some) and one `storage available
 * again` line with how long it lasted. Changes that come faster (a pool short of connections
 * fails some queries and not others) are counted into the next line, at most one per 10 s.
 */
export function availabilityLog(
  warn: (event: string, fields: Record<string, unknown>) => void,
  now: () => number = Date.now,
): (problem: string | undefined) => void {
  let lastLine = Number.NEGATIVE_INFINITY;
  /** When the outage that was logged began; undefined once its end was logged, or when none was. */
  let loggedSince: number | undefined;
  let unlogged = 0;
  return (problem) => {
    if (problem === undefined) {
      if (loggedSince === undefined) return;
      warn("storage available again", { unavailableMs: now() - loggedSince });
      loggedSince = undefined;
      return;
    }
    if (now() - lastLine < EVERY_MS) {
      unlogged++;
      return;
    }
    warn("storage unavailable", { reason: problem, ...(unlogged > 0 && { outagesSinceLastLine: unlogged }) });
    lastLine = now();
    loggedSince ??= lastLine;
    unlogged = 0;
  };
}
