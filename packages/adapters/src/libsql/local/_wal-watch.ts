import { statSync } from "node:fs";
import type { LocalConnection } from "./_connection.js";

/**
 * A WAL larger than this is checkpointed by hand after a commit, at most every
 * `WAL_WATCH_EVERY_MS`, to learn whether checkpoints still succeed: SQLite's own, which run
 * after commits once the WAL holds 1000 pages (4 MB), fail silently, and a database file that
 * can no longer be written would let the WAL grow without bound, unnoticed.
 */
const WAL_WATCH_BYTES = 64 * 1024 * 1024;
const WAL_WATCH_EVERY_MS = 10_000;

/**
 * Watches a WAL's size (stat only: the file is never opened here, see `_wal-sync.ts`) and
 * checkpoints one past `WAL_WATCH_BYTES`, to see that the database file still takes its pages.
 */
export class WalWatch {
  #watchedAt = Number.NEGATIVE_INFINITY;
  #problem: string | undefined;

  constructor(
    private readonly walPath: string,
    private readonly connection: LocalConnection,
    /** Monotonic, ms. */
    private readonly clock: () => number,
    /** Told of each failed checkpoint: the reason, with the WAL's size. */
    private readonly onCheckpointFailed: ((reason: string) => void) | undefined,
  ) {}

  /** Undefined while checkpoints succeed (or the WAL stays small); else why not, in a sentence. */
  get problem(): string | undefined {
    return this.#problem;
  }

  /** After a commit: now and then, a WAL past the bound is checkpointed here. */
  committed(): void {
    const now = this.clock();
    if (now - this.#watchedAt < WAL_WATCH_EVERY_MS) return;
    this.#watchedAt = now;
    let bytes: number;
    try {
      bytes = statSync(this.walPath).size;
    } catch {
      return;
    }
    if (bytes <= WAL_WATCH_BYTES) {
      this.#problem = undefined;
      return;
    }
    try {
      // PASSIVE: never waits for readers; an error means the database file takes no pages.
      this.connection.control("PRAGMA wal_checkpoint(PASSIVE)");
      this.#problem = undefined;
    } catch (error) {
      const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
      this.#problem = `checkpoints fail (${message}): the WAL holds ${(bytes / 1024 / 1024).toFixed(1)} MB not in the database file`;
      this.onCheckpointFailed?.(this.#problem);
    }
  }
}
