/**
 * How long a store must answer without a failure before its outage is over: shorter gaps (a
 * pool short of connections fails some queries and not others) are one outage, said so.
 */
export const SETTLE_MS = 1_000;

/** The lines of one store's outages: their events, and the fields of the line that ends one. */
export interface OutageLines {
  /** The first line's event (`storage unavailable`), with the first failure's reason. */
  lost: string;
  /** The last line's event (`storage available again`), with the outage's length and count. */
  back: string;
  /** The last line's field for the outage's length, ms. */
  lengthField: string;
  /** The last line's field for what `counted` counts (the 503s answered, the requests admitted without limits). */
  countField: string;
  /** Fields every line carries (which limiter). */
  fields?: Record<string, unknown>;
}

/** What a store's requests tell the log of its outages. */
export interface OutageLog {
  /** A request of the store failed: the first failure of an outage begins it, with a line. */
  failed(reason: string): void;
  /** A request of the store succeeded: the outage ends, with a line, unless another fails within `SETTLE_MS`. */
  answered(): void;
  /** One more of what the outage caused (a 503, a request admitted without limits), while it lasts. */
  counted(): void;
}

/**
 * One line when a store is lost (its first failure, with the reason) and one when it is back
 * (its first success that no failure follows within `SETTLE_MS`), with the outage's length,
 * from the first failure to that success, and its count. Outages closer than `SETTLE_MS` are
 * one, and the last line says how many it merged. No other cap: every outage has its lines.
 * Measured by the monotonic clock; the last line is written by a timer once the store has
 * answered for `SETTLE_MS`.
 */
export function outageLog(
  lines: OutageLines,
  warn: (event: string, fields: Record<string, unknown>) => void,
  monotonic: () => number = () => performance.now(),
): OutageLog {
  /** The outage under way: since when, what it caused, how many it merged, and when it ended if it did. */
  let outage: { since: number; count: number; merged: number; endedAt: number | undefined } | undefined;
  let settling: ReturnType<typeof setTimeout> | undefined;

  const over = () => {
    settling = undefined;
    const { since, count, merged, endedAt } = outage!;
    outage = undefined;
    warn(lines.back, {
      ...lines.fields,
      [lines.lengthField]: Math.round(endedAt! - since),
      [lines.countField]: count,
      ...(merged > 1 && {
        outages: merged,
        note: `${merged} outages less than ${SETTLE_MS / 1000} s apart, logged as one`,
      }),
    });
  };

  return {
    failed(reason) {
      if (outage === undefined) {
        outage = { since: monotonic(), count: 0, merged: 1, endedAt: undefined };
        warn(lines.lost, { ...lines.fields, reason });
      } else if (settling !== undefined) {
        clearTimeout(settling);
        settling = undefined;
        outage.endedAt = undefined;
        outage.merged++;
      }
    },
    answered() {
      if (outage === undefined || settling !== undefined) return;
      outage.endedAt = monotonic();
      settling = setTimeout(over, SETTLE_MS);
      // Never what keeps a process alive (Bun, Deno and Node have unref).
      (settling as { unref?: () => void }).unref?.();
    },
    counted() {
      if (outage !== undefined) outage.count++;
    },
  };
}
