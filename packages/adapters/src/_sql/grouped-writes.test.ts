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

const join = (db: ReturnType<typeof deferredEngine>, max?: number, oneAtATime?: boolean) =>
  groupedWrites<string, string>(db, {
    ...(max === undefined ? {} : { max }),
    ...(oneAtATime === undefined ? {} : { oneAtATime }),
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

  it("with oneAtATime, holds a name's next group open until its last write settled, so every caller meanwhile joins it", async () => {
    // An engine whose writes settle when the test says: the first write of x is still running
    // while c, d and e arrive over several turns.
    const written: string[] = [];
    const running: (() => void)[] = [];
    const db = {
      write: (unit: Unit) =>
        new Promise<Result[]>((resolve) => {
          const [statement] = statementsOf(unit) as string[];
          written.push(statement!);
          running.push(() => resolve([{ rows: [{ sql: statement }], rowsAffected: 0 }]));
        }),
    };
    const write = groupedWrites<string, string>(db, {
      make: (items) => [items.join(",")],
      answer: ([result], items) => items.map((item) => `${item} in ${String(result!.rows[0]!.sql)}`),
      oneAtATime: true,
    });
    const first = write("x", "a");
    const other = write("y", "b");
    const later = [write("x", "c")];
    await new Promise((resolve) => setImmediate(resolve));
    later.push(write("x", "d"));
    await new Promise((resolve) => setTimeout(resolve, 5));
    later.push(write("x", "e"));
    expect(written).toEqual(["a", "b"]);
    running.shift()!();
    expect(await first).toBe("a in a");
    await new Promise((resolve) => setImmediate(resolve));
    expect(written).toEqual(["a", "b", "c,d,e"]);
    for (const settle of running.splice(0)) settle();
    expect(await Promise.all([other, ...later])).toEqual(["b in b", "c in c,d,e", "d in c,d,e", "e in c,d,e"]);
  });

  it("with oneAtATime, writes the next group after a failed one", async () => {
    const db = deferredEngine((statements) => (statements[0] === "a" ? new Error("down") : undefined));
    const write = join(db, undefined, true);
    const first = write("x", "a").then(
      () => "written",
      (error: Error) => error.message,
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(await Promise.all([first, write("x", "b")])).toEqual(["down", "b in b"]);
    expect(db.written).toEqual([["a"], ["b"]]);
  });
});
