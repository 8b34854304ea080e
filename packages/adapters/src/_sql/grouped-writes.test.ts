import { describe, expect, it } from "vitest";
import { afterThisTurn, type Result, type Statement, statementsOf, type Unit } from "./engine.js";
import { groupedWrites } from "./grouped-writes.js";

/** An engine that makes each unit after this turn (as the local and Postgres engines do) and records what it wrote. */
function deferredEngine(fail?: (statements: readonly Statement[]) => unknown) {
  const written: (readonly Statement[])[] = [];
  return {
    written,
    write: (unit: Unit) =>
      new Promise<Result[]>((resolve, reject) => {
        afterThisTurn(() => {
          const statements = statementsOf(unit);
          written.push(statements);
          const error = fail?.(statements);
          if (error !== undefined) reject(error);
          else
            resolve(
              statements.map((statement) => ({
                rows: [{ sql: typeof statement === "string" ? statement : statement.sql }],
                rowsAffected: 0,
              })),
            );
        });
      }),
  };
}

const join = (db: ReturnType<typeof deferredEngine>, max?: number) =>
  groupedWrites<string, string>(db, {
    ...(max === undefined ? {} : { max }),
    make: (items) => [items.join(",")],
    answer: ([result], items) => items.map((item) => `${item} in ${String(result!.rows[0]!.sql)}`),
  });

describe("groupedWrites", () => {
  it("makes one write of the callers of one name that arrive before its statements are made, answering each in order", async () => {
    const db = deferredEngine();
    const write = join(db);
    const answers = await Promise.all([write("x", "a"), write("y", "b"), write("x", "c")]);
    expect(answers).toEqual(["a in a,c", "b in b", "c in a,c"]);
    expect(db.written).toEqual([["a,c"], ["b"]]);
  });

  it("opens a new group once the statements were made, and once a group is full", async () => {
    const db = deferredEngine();
    const write = join(db, 2);
    const first = [write("x", "a"), write("x", "b"), write("x", "c")];
    await Promise.all(first);
    await write("x", "d");
    expect(db.written).toEqual([["a,b"], ["c"], ["d"]]);
  });

  it("rejects every caller of a failed write, and the next caller gets a write of its own", async () => {
    const db = deferredEngine((statements) => (statements[0] === "a,b" ? new Error("down") : undefined));
    const write = join(db);
    const outcomes = await Promise.allSettled([write("x", "a"), write("x", "b")]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["rejected", "rejected"]);
    expect(await write("x", "c")).toBe("c in c");
  });
});
