import { StorageUnavailableError } from "@petstore/core";
import { type Result, type Statement, statementsOf, type Unit, type WriteOptions } from "../../_sql/engine.js";
import { storageError } from "../_storage-errors.js";
import type { LocalConnection } from "./_connection.js";
import type { FileIdentity } from "./_file-identity.js";
import type { FsyncPolicy } from "./_fsync-policy.js";

/** What one caller of `write` asked for, and how to answer it once the batch has committed. */
interface Pending {
  unit: Unit;
  fsync: boolean;
  resolve: (results: Result[]) => void;
  reject: (error: unknown) => void;
}

/** A unit's results, or the error that failed it alone. */
type Outcome = Result[] | { error: unknown };

/** Told of each batch, around the transaction. */
export interface BatchHooks {
  /** Before its BEGIN. */
  begins(): void;
  /** After its COMMIT, once it is to be answered; must not throw. */
  committed(batch: { units: number; commitMs: number }): void;
}

/**
 * The writes of a local database, group-committed: every unit that arrives within one turn of
 * the event loop runs in ONE `BEGIN IMMEDIATE` ... `COMMIT`, so concurrent requests share one
 * fsync. Each unit stays atomic on its own (one statement, or a SAVEPOINT around several) and
 * fails alone; each caller's promise settles only after the commit that made its unit durable
 * (when, the `FsyncPolicy` says).
 */
export class GroupCommit {
  #queue: Pending[] = [];
  readonly #flush = () => this.#commit();

  constructor(
    private readonly connection: LocalConnection,
    private readonly fsync: FsyncPolicy,
    /** Checked after every commit that holds an acknowledged write. */
    private readonly files: FileIdentity | undefined,
    private readonly hooks: BatchHooks,
  ) {}

  write(unit: Unit, options?: WriteOptions): Promise<Result[]> {
    return new Promise((resolve, reject) => {
      const fsync = options?.survives !== "process-crash";
      // setImmediate, not a microtask: the batch then holds every request this turn of the
      // event loop started, not only the one that opened it.
      if (this.#queue.push({ unit, fsync, resolve, reject }) === 1) setImmediate(this.#flush);
    });
  }

  #commit(): void {
    const pending = this.#queue;
    this.#queue = [];
    this.hooks.begins();
    const acknowledged = pending.some((each) => each.fsync);
    const sync = this.fsync.batch(acknowledged);
    const outcomes: Outcome[] = [];
    const began = performance.now();
    try {
      this.connection.synchronous(sync.synchronous);
      this.connection.control("BEGIN IMMEDIATE");
      for (const each of pending) outcomes.push(this.#run(each.unit));
      this.connection.control("COMMIT");
      sync.committed();
      // Committed, but into a file nobody will open again: not a write to acknowledge. Asked
      // (three stat calls) only when the batch holds one: counts alone are acknowledged as
      // nothing, and the next acknowledged write, or the health check's, finds the file gone.
      const moved = acknowledged ? this.files?.changed() : undefined;
      if (moved !== undefined) throw new StorageUnavailableError(moved);
      this.hooks.committed({ units: pending.length, commitMs: performance.now() - began });
    } catch (error) {
      // Nothing of this batch was committed, or only into a removed file: every caller hears
      // the error (a 503 when the database is locked, full, unwritable or gone), none a result.
      this.connection.rollback();
      for (const each of pending) each.reject(storageError(error));
      return;
    }
    for (const [i, each] of pending.entries()) this.#answer(each, outcomes[i]!);
  }

  #answer(each: Pending, outcome: Outcome): void {
    if (!Array.isArray(outcome)) each.reject(storageError(outcome.error));
    else if (each.fsync && this.fsync.visibleBeforeDurable) {
      this.fsync.durable().then(
        () => each.resolve(outcome),
        (error: unknown) => each.reject(storageError(error)),
      );
    } else each.resolve(outcome);
  }

  /** The unit's results, or the error that failed it alone; throws when the transaction is gone. */
  #run(unit: Unit): Outcome {
    let statements: readonly Statement[];
    try {
      statements = statementsOf(unit);
    } catch (error) {
      return { error };
    }
    const [only] = statements;
    if (statements.length === 1 && only !== undefined) {
      // One statement is atomic by itself: a failing one undoes only its own changes.
      try {
        return [this.connection.run(only)];
      } catch (error) {
        if (!this.connection.inTransaction) throw error;
        return { error };
      }
    }
    this.connection.control("SAVEPOINT unit");
    try {
      const results = statements.map((statement) => this.connection.run(statement));
      this.connection.control("RELEASE unit");
      return results;
    } catch (error) {
      // Errors like SQLITE_FULL or SQLITE_IOERR roll the whole transaction back.
      if (!this.connection.inTransaction) throw error;
      this.connection.control("ROLLBACK TO unit");
      this.connection.control("RELEASE unit");
      return { error };
    }
  }
}
