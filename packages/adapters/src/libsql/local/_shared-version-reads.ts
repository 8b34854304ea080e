import { afterThisTurn, type Result, type Statement } from "../../_sql/engine.js";

/**
 * The reads of `readVersion` (see `SqlEngine`), one per statement and arguments shared by its
 * callers while it still reflects every acknowledged write. A write of this process: the read
 * runs at once (in process) and a batch commits and answers within one task after it begins,
 * so a write answered after a shared read began is in a batch that began after it: a batch
 * beginning ends the sharing (`batchBegins`). Another process's commit answered before a call
 * of this turn could only reach a client whose next request arrives in a later turn: the
 * sharing never outlives the turn. Each rule has a test in `local-engine.test.ts`.
 */
export class SharedVersionReads {
  readonly #reads = new Map<string, Promise<Result>>();
  /** Whether the end of this turn is to forget the reads (one callback per turn, not one per read). */
  #forgetting = false;

  constructor(private readonly execute: (statement: Statement) => Promise<Result>) {}

  read(statement: Statement): Promise<Result> {
    const key = typeof statement === "string" ? statement : `${statement.sql}\n${JSON.stringify(statement.args ?? [])}`;
    const held = this.#reads.get(key);
    if (held) return held;
    if (!this.#forgetting) {
      this.#forgetting = true;
      afterThisTurn(() => {
        this.#forgetting = false;
        this.#reads.clear();
      });
    }
    const read = this.execute(statement);
    this.#reads.set(key, read);
    return read;
  }

  /** A write batch begins: no read taken before it is shared after it. */
  batchBegins(): void {
    this.#reads.clear();
  }
}
