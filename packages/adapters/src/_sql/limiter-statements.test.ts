import { describe, expect, it } from "vitest";
import { SQLITE_LIMITER_STATEMENTS } from "../libsql/limiter.js";
import { POSTGRES_LIMITER_STATEMENTS } from "../postgres/limiter.js";
import type { Statement } from "./engine.js";
import type { LimiterStatements } from "./limiter.js";

const bucket = (i: number) => ({ bucket: `b${i}`, length0: 60_000, length1: 86_400_000, limit0: 10, limit1: 100 });

const sqlOf = (statement: Statement) => (typeof statement === "string" ? statement : statement.sql);

/** Every statement a dialect sends (a shared hit over one to three buckets), as the engine gets it. */
function sent(statements: LimiterStatements): Record<string, string> {
  const texts: Record<string, string> = {
    hit: sqlOf(statements.hit({ ...bucket(0), now: null, hits: 1, threshold: 5, banMs: 1000 })),
    sweep: sqlOf(statements.sweep(null, 10)),
    peek: sqlOf(statements.peek({ bucket: "b0", now: null, length0: 60_000, length1: 86_400_000 })),
    unban: sqlOf(statements.unban("b0", null)),
  };
  for (const n of [1, 2, 3]) {
    const buckets = Array.from({ length: n }, (_, i) => bucket(i));
    statements.sharedHit({ buckets, now: null, hits: 1, threshold: 5, banMs: 1000 }).forEach((statement, k) => {
      texts[`sharedHit(${n})[${k}]`] = sqlOf(statement);
    });
  }
  return texts;
}

// The SQL is the limiter's meaning on each engine, tuned against its planner: a change to the
// text the engines receive must be one made on purpose (then `vitest -u` and review the diff).
describe("the limiter's SQL, as each engine receives it", () => {
  it("is SQLite's (libSQL, D1 and Durable Objects) as recorded", () => {
    expect(sent(SQLITE_LIMITER_STATEMENTS)).toMatchSnapshot();
  });

  it("is PostgreSQL's as recorded", () => {
    expect(sent(POSTGRES_LIMITER_STATEMENTS)).toMatchSnapshot();
  });
});
