/** One watched wait: its deadline, and what to do when it passes (undefined once the wait ended). */
export interface Waiting {
  at: number;
  expire: ((waiting: Waiting) => void) | undefined;
}

/** Waits of one length, watched by one timer. */
export interface Deadlines {
  /** Queues a wait, its deadline `ms` from now (set here). */
  start<W extends Waiting>(waiting: W): W;
  /** Ends a wait before its deadline: its `expire` will not run. */
  end(waiting: Waiting): void;
  /** Waits held in the queue, ended ones not yet dropped included (bounded; for tests). */
  queued(): number;
}

/** Past this many entries, ended waits still queued behind an older one are dropped in one pass. */
const COMPACT_ABOVE = 4096;

/**
 * Waits of one length (`ms`) watched by one timer instead of a timer each: every wait has the
 * same length, so deadlines come in the order waits began and the timer only ever waits for
 * the oldest. A wait carries what its `expire` needs, so none costs a closure. Where timers
 * can be unref'd (Bun, Node) the timer stays armed while the queue is empty and keeps no
 * process alive (what is waited for, a connection, does); elsewhere it is cleared once the
 * last wait ends, as a timer per wait would be.
 * @example const body = deadlines(30_000); const waiting = body.start({ at: 0, expire: () => console.log("too late") }); body.end(waiting);
 */
export function deadlines(ms: number, now: () => number = () => performance.now()): Deadlines {
  let queue: Waiting[] = [];
  let head = 0;
  let live = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let unrefed = false;

  const arm = (delay: number) => {
    timer = setTimeout(check, Math.max(0, delay));
    const unref = (timer as { unref?: () => void }).unref;
    unrefed = unref !== undefined;
    unref?.call(timer);
  };

  /** Drops ended waits from the front, and all of them once they are most of a long queue. */
  const trim = () => {
    while (head < queue.length && queue[head]!.expire === undefined) head++;
    if (head === queue.length) {
      queue = [];
      head = 0;
      if (!unrefed && timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
      }
    } else if (queue.length - head > COMPACT_ABOVE && queue.length - head > 4 * live) {
      queue = queue.slice(head).filter((waiting) => waiting.expire !== undefined);
      head = 0;
    }
  };

  function check() {
    timer = undefined;
    const time = now();
    while (head < queue.length) {
      const waiting = queue[head]!;
      const expire = waiting.expire;
      if (expire !== undefined) {
        if (waiting.at > time) break;
        waiting.expire = undefined;
        live--;
        expire(waiting);
      }
      head++;
    }
    trim();
    if (head < queue.length) arm(queue[head]!.at - time);
  }

  return {
    start(waiting) {
      waiting.at = now() + ms;
      queue.push(waiting);
      live++;
      if (timer === undefined) arm(ms);
      return waiting;
    },
    end(waiting) {
      if (waiting.expire === undefined) return;
      waiting.expire = undefined;
      live--;
      trim();
    },
    queued: () => queue.length - head,
  };
}
