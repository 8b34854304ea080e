import { WalDurability } from "./_wal-durability.js";
import type { WalSync } from "./_wal-sync.js";

/** A batch of writes that may skip its fsync still gets one if the last was longer ago than this. */
const MAX_UNSYNCED_MS = 1_000;

/** How one batch of writes reaches the disk, decided before its BEGIN. */
export interface BatchSync {
  /** The connection's `synchronous` setting for the batch. */
  readonly synchronous: "FULL" | "NORMAL";
  /** Right after the batch's COMMIT: notes the fsync it ran, or starts the one due beside the event loop. */
  committed(): void;
}

/**
 * When a local database's commits reach the disk. A batch holding an acknowledged write
 * (`survives: "power-loss"`) is on disk before any of its callers hears of it. A batch of
 * counts alone (`"process-crash"`) needs no fsync of its own, since in WAL mode the next one
 * covers it, but one runs at least every `MAX_UNSYNCED_MS`, which bounds what a power cut can
 * take. With `walSync`, every batch commits with `synchronous = NORMAL` and the WAL is fsynced
 * beside the event loop (`WalDurability`), which acknowledged writes and reads wait for;
 * without it, a batch due an fsync commits with `FULL`, on the event loop. A file not in WAL
 * mode (a rollback journal) commits every batch with `FULL`: NORMAL there may corrupt the file
 * on a power cut.
 */
export class FsyncPolicy {
  readonly #wal: WalDurability | undefined;
  /** When the last fsync of a commit on the event loop began (without `walSync`). */
  #syncedAt = 0;

  constructor(
    /** Monotonic, ms. */
    private readonly clock: () => number,
    /** False for a rollback journal. */
    private readonly walMode: boolean,
    walSync: WalSync | undefined,
    onFsync: ((ms: number) => void) | undefined,
  ) {
    this.#wal = walSync && new WalDurability(walSync, clock, onFsync);
  }

  /** True when a commit is visible before it is on disk: a durable answer then waits for `durable()`. */
  get visibleBeforeDurable(): boolean {
    return this.#wal !== undefined;
  }

  /**
   * Settles once an fsync of the WAL that began after the call is done (see `WalDurability`);
   * at once without `walSync`, where every write that must survive a power cut was fsynced by
   * its COMMIT (`FULL`).
   */
  durable(): Promise<void> {
    return this.#wal ? this.#wal.durable() : Promise.resolve();
  }

  /** For a batch about to begin: `acknowledged` when it holds a write answered only once on disk. */
  batch(acknowledged: boolean): BatchSync {
    const now = this.clock();
    const wal = this.#wal;
    const due = acknowledged || now - (wal ? wal.syncedAt : this.#syncedAt) >= MAX_UNSYNCED_MS;
    if (wal) {
      // Acknowledged writes start their fsync by waiting for it; counts alone get one nobody waits for.
      const committed = () => {
        if (due && !acknowledged) wal.sync();
      };
      return { synchronous: this.walMode ? "NORMAL" : "FULL", committed };
    }
    if (!due) return { synchronous: this.walMode ? "NORMAL" : "FULL", committed: () => {} };
    const committed = () => {
      this.#syncedAt = now;
    };
    return { synchronous: "FULL", committed };
  }
}
