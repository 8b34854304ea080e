import { StorageUnavailableError } from "@petstore/core";
import { WalOpenError, type WalSync } from "./_wal-sync.js";

/**
 * When commits made with `synchronous = NORMAL` reach the disk: `durable()` settles after an
 * fsync of the WAL that began after the call (on a worker thread, see `WalSync`). The fsync
 * starts once the code that asked is done (a microtask later), so the writes of one batch and
 * the reads of one turn share it; one fsync serves everyone who asked while the previous ran.
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
      if (this.#waiting.push((error) => (error === undefined ? resolve() : reject(error))) === 1)
        queueMicrotask(() => this.sync());
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
    let outcome: Error | undefined;
    this.walSync
      .sync()
      .then(
        () => {
          this.syncedAt = started;
          this.onFsync?.(performance.now() - began);
        },
        (error: unknown) => {
          // Not opened for this fsync: a 503 for its waiters, and the next one may succeed.
          if (error instanceof WalOpenError)
            outcome = new StorageUnavailableError("the database's log could not be opened to reach the disk", {
              cause: error,
            });
          else
            this.#failure ??= new StorageUnavailableError("the database's log could not be written to disk", {
              cause: error,
            });
        },
      )
      .finally(() => {
        for (const settle of waiting) settle(this.#failure ?? outcome);
        this.#syncing = false;
        if (this.#waiting.length > 0) this.sync();
      });
  }
}
