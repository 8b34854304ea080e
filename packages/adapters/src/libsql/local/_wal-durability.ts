import type { WalSync } from "./_wal-sync.js";

/** An error shaped like SQLite's, so that it becomes a 503 like a failed commit. */
function fsyncError(cause: unknown): Error {
  return Object.assign(new Error("The database's log could not be written to disk", { cause }), { code: "SQLITE_IOERR_FSYNC" });
}

/**
 * When commits made with `synchronous = NORMAL` reach the disk: `durable()` settles after an
 * fsync of the WAL that began after the call (on a worker thread, see `WalSync`). One fsync
 * serves everyone who asked while the previous one ran.
 */
export class WalDurability {
  /** When the last successful fsync began (Unix ms). */
  syncedAt = 0;
  #syncing = false;
  #waiting: ((error?: unknown) => void)[] = [];
  /**
   * The first fsync failure, kept: after one, Linux may have dropped the unwritten pages and a
   * later fsync can succeed without them, so no later write or read can be vouched for either.
   * Every durable answer fails (a 503) until the process restarts.
   */
  #failure: Error | undefined;

  constructor(
    private readonly walSync: WalSync,
    private readonly clock: () => number,
    private readonly onFsync: ((ms: number) => void) | undefined,
  ) {}

  /** Settles once an fsync that began after this call is done. */
  durable(): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#waiting.push((error) => (error === undefined ? resolve() : reject(error)));
      this.sync();
    });
  }

  /** Starts an fsync for everyone waiting, unless one is running: they then get the next. */
  sync(): void {
    if (this.#syncing) return;
    this.#syncing = true;
    const waiting = this.#waiting;
    this.#waiting = [];
    const started = this.clock();
    const began = performance.now();
    this.walSync
      .sync()
      .then(
        () => {
          this.syncedAt = started;
          this.onFsync?.(performance.now() - began);
        },
        (error: unknown) => {
          this.#failure ??= fsyncError(error);
        },
      )
      .finally(() => {
        for (const settle of waiting) settle(this.#failure);
        this.#syncing = false;
        if (this.#waiting.length > 0) this.sync();
      });
  }
}
