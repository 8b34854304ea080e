import { errorChain } from "@petstore/core";
import type { Sql } from "postgres";

/** How many times the probe looks: a busy pooler may hand back the same server connection by chance. */
const ATTEMPTS = 3;

const backendPid = async (queries: { unsafe(query: string): PromiseLike<ArrayLike<{ pid: unknown }>> }) =>
  Number((await queries.unsafe("SELECT pg_backend_pid() AS pid"))[0]!.pid);

/**
 * Whether the connections of `sql` go through a pooler in transaction mode (PgBouncer's
 * `pool_mode = transaction`), where each transaction may run on another server connection, so
 * that a statement prepared on one is missing on the next ("prepared statement ... does not
 * exist"). Two client connections: A asks for its server process, B opens a transaction and
 * asks for its own, then A asks again. Straight to PostgreSQL, or through a pooler in session
 * mode, A keeps one server process and B never has it; in transaction mode, B is handed the
 * process A just released, or A another one. A pooler in statement mode refuses B's
 * transaction: that error is thrown (the server cannot serve without transactions).
 */
export async function transactionPooling(sql: Sql): Promise<boolean> {
  const [a, b] = [await sql.reserve(), await sql.reserve()];
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const first = await backendPid(a);
      await b.unsafe("BEGIN");
      try {
        // Checked before A asks again: with one server connection in the pool, A would wait for B.
        if ((await backendPid(b)) === first) return true;
        if ((await backendPid(a)) !== first) return true;
      } finally {
        await b.unsafe("COMMIT");
      }
    }
    return false;
  } finally {
    a.release();
    b.release();
  }
}

/**
 * Whether the connections of `sql` go through a pooler in statement mode (PgBouncer's
 * `pool_mode = statement`): a statement is answered, a transaction is not (the pooler closes
 * the connection at `BEGIN`). Asked only once something failed, to say why in one line.
 */
export async function statementPooling(sql: Sql): Promise<boolean> {
  try {
    await sql.unsafe("SELECT 1");
  } catch {
    return false;
  }
  try {
    await sql.begin((transaction) => transaction.unsafe("SELECT 1"));
    return false;
  } catch {
    return true;
  }
}

/**
 * Whether `error` (or a cause) is a pooler refusing a startup parameter it does not track
 * (PgBouncer: "unsupported startup parameter: default_transaction_isolation").
 */
export function refusedStartupParameter(error: unknown): boolean {
  return errorChain(error).some((cause) => /unsupported startup parameter/i.test(cause.message));
}
